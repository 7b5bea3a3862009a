package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// The keys of KEB's hap.multiHyperscalerAccount values block.
const (
	multiAccountKey = "hap.multiHyperscalerAccount"
	allowlistKey    = multiAccountKey + ".allowedGlobalAccounts"
	guardKey        = multiAccountKey + ".minBindingsForGuard"
	limitsKey       = multiAccountKey + ".limits"
	defaultLimitKey = "default"
)

// notReadByKEB are the limit keys of KEB's values that KEB as deployed does
// not apply: KEB's envconfig reads the fields OpenStack and AliCloud under
// ..._LIMITS_OPEN_STACK and ..._LIMITS_ALI_CLOUD (see envKeys), while KEB's
// chart sets ..._LIMITS_OPENSTACK and ..._LIMITS_ALICLOUD.
var notReadByKEB = map[string]string{
	hap.ProviderOpenStack: fieldLimitsOpenStack,
	hap.ProviderAliCloud:  fieldLimitsAliCloud,
}

// hapReader reads KEB's `hap` block from the decoded document. Unlike the
// job's own keys, a key it does not know is a warning, not a refusal: a KEB
// upgrade that adds a setting must not stop the job.
type hapReader struct {
	warnings []Warning
}

func (r *hapReader) warn(key string, value any, format string, args ...any) {
	r.warnings = append(r.warnings, Warning{Key: key, Value: quote(value), Reason: fmt.Sprintf(format, args...)})
}

func (r *hapReader) unknown(key string, value any) {
	r.warn(key, value, "not a setting the job knows in KEB's hap block; ignored (a newer KEB may have added it)")
}

// readHAP reads the `hap` block.
func (r *hapReader) readHAP(node any) (HAPValues, error) {
	var h HAPValues
	m, err := mapping("hap", node, "must be a mapping")
	if err != nil || m == nil {
		return h, err
	}
	for _, key := range sortedKeys(m) {
		switch value := m[key]; key {
		case "rule":
			if h.Rule, err = stringList(keyHapRule, value, "must be a list of rules such as aws(PR=cf-eu11) -> EU"); err != nil {
				return h, err
			}
		case "multiHyperscalerAccount":
			if h.MultiHyperscalerAccount, err = r.readMultiAccount(value); err != nil {
				return h, err
			}
		case "candidateTable":
			// KEB's own switch for reading the candidate table
			// (docs/keb-adoption.md); nothing the job decides reads it.
		default:
			r.unknown(join("hap", key), value)
		}
	}
	return h, nil
}

// readMultiAccount reads hap.multiHyperscalerAccount; a missing or null block
// is nil.
func (r *hapReader) readMultiAccount(node any) (*MultiAccount, error) {
	m, err := mapping(multiAccountKey, node, "must be a mapping")
	if err != nil || m == nil {
		return nil, err
	}
	out := &MultiAccount{Limits: Limits{Default: hap.NoLimit, Providers: map[string]int{}}}
	for _, key := range sortedKeys(m) {
		switch value := m[key]; key {
		case "allowedGlobalAccounts":
			if out.AllowedGlobalAccounts, err = stringList(allowlistKey, value, "must be a list of global account IDs"); err != nil {
				return nil, err
			}
			for i, ga := range out.AllowedGlobalAccounts {
				r.checkAllowed(allowlistKey+"["+strconv.Itoa(i)+"]", ga)
			}
		case "minBindingsForGuard":
			if value == nil {
				continue
			}
			if out.MinBindingsForGuard, err = wholeNumber(guardKey, value, "bindings"); err != nil {
				return nil, err
			}
		case "limits":
			if err := r.readLimits(value, &out.Limits); err != nil {
				return nil, err
			}
		default:
			r.unknown(join(multiAccountKey, key), value)
		}
	}
	return out, nil
}

// readLimits reads hap.multiHyperscalerAccount.limits into l, keeping only
// what KEB applies.
func (r *hapReader) readLimits(node any, l *Limits) error {
	m, err := mapping(limitsKey, node, "must be a mapping of provider to limit")
	if err != nil || m == nil {
		return err
	}
	for _, key := range sortedKeys(m) {
		value, at := m[key], join(limitsKey, key)
		known := key == defaultLimitKey || slices.Contains(hap.LimitProviders, key)
		if !known {
			r.unknownLimit(at, key, value)
			continue
		}
		if value == nil {
			continue // null: as if the key were not written
		}
		n, err := wholeNumber(at, value, "clusters")
		if err != nil {
			return err
		}
		switch {
		case key == defaultLimitKey:
			l.Default = n
		case notReadByKEB[key] != "":
			if n != 0 {
				field := notReadByKEB[key]
				r.warn(at, value, "KEB as deployed does not apply this limit: it reads %s, while its chart sets %s, "+
					"so KEB, and the job with it, applies the default for %s",
					envName(kebEnvName+"."+field), chartVariable(field), key)
			}
		default:
			l.Providers[key] = n
		}
	}
	return nil
}

// unknownLimit warns about a key under limits that is not one of KEB's.
func (r *hapReader) unknownLimit(at, key string, value any) {
	switch lower := strings.ToLower(key); {
	case lower == defaultLimitKey:
		r.warn(at, value, "KEB has no limit key %s (its key is %s); not applied", key, defaultLimitKey)
	case hap.KEBProvider(key) != "":
		r.warn(at, value, "KEB has no limit key %s (its key for this provider is %s); not applied", key, hap.KEBProvider(key))
	case strings.TrimSpace(key) == "":
		r.warn(at, value, "KEB has no limit for %q; it applies the default", key)
	default:
		r.warn(at, value, "KEB has no limit for %s; it applies the default", key)
	}
}

// checkAllowed warns about an allowlist entry that matches no global
// account: KEB compares the IDs exactly.
func (r *hapReader) checkAllowed(key, ga string) {
	switch {
	case ga == "":
		r.warn(key, ga, "an empty entry matches no global account")
	case strings.TrimSpace(ga) != ga:
		r.warn(key, ga, "KEB compares global account IDs exactly, so an entry with surrounding spaces matches no global account")
	}
}

// mapping returns node as a mapping; null is a nil mapping.
func mapping(key string, node any, reason string) (map[string]any, error) {
	if node == nil {
		return nil, nil
	}
	m, ok := node.(map[string]any)
	if !ok {
		return nil, invalid(key, node, "%s", reason)
	}
	return m, nil
}

// stringList returns node as a list of strings; null is an empty list.
func stringList(key string, node any, reason string) ([]string, error) {
	if node == nil {
		return nil, nil
	}
	items, ok := node.([]any)
	if !ok {
		return nil, invalid(key, node, "%s", reason)
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, invalid(key+"["+strconv.Itoa(i)+"]", item, "must be a string")
		}
		out = append(out, s)
	}
	return out, nil
}

// maxCount bounds limits and the guard, so a typo of many digits is refused
// rather than taken.
const maxCount = math.MaxInt32

// wholeNumber returns node as a whole number from 0 to maxCount.
func wholeNumber(key string, node any, what string) (int, error) {
	f, ok := node.(float64)
	switch {
	case !ok || f != math.Trunc(f) || f < 0:
		return 0, invalid(key, node, "must be a whole number of %s, 0 or more", what)
	case f > maxCount:
		return 0, invalid(key, node, "must be at most %d", maxCount)
	}
	return int(f), nil
}

// join appends a key to a path, quoting a key that would not show.
func join(path, key string) string {
	if strings.TrimSpace(key) == "" {
		key = strconv.Quote(key)
	}
	return path + "." + key
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
