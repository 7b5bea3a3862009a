package config

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/kyma-project/hap-reconciler/hap"
)

// Duration is a time.Duration written as "90s", "1h" or "1h30m".
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: durationType}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: s, Type: durationType}
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration string, so a dumped config reads back.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

var durationType = reflect.TypeOf(durationDoc(""))

// durationDoc only names the expected type in messages.
type durationDoc string

const limitsKey = "hap.multiHyperscalerAccount.limits"

// UnmarshalJSON reads `default` and the provider overrides, folding provider
// spellings (AWS, sap-converged-cloud, ...) to Gardener's names.
func (l *Limits) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return invalid(limitsKey, json.RawMessage(b), "must be a mapping of provider to limit")
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	l.Providers = map[string]int{}
	seenAs := map[string]string{}
	for _, key := range keys {
		at := limitsKey + "." + key
		if strings.TrimSpace(key) == "" {
			return invalid(limitsKey, key, "provider keys must not be empty")
		}
		n, err := positiveInt(raw[key])
		if err != nil {
			return invalid(at, raw[key], "%s", err)
		}
		if key == "default" {
			l.Default = n
			continue
		}
		provider := hap.CanonicalProvider(key)
		if first, dup := seenAs[provider]; dup {
			return invalid(at, key, "provider %q is already set as %q", provider, first)
		}
		seenAs[provider] = key
		l.Providers[provider] = n
	}
	return nil
}

func positiveInt(raw json.RawMessage) (int, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("must be a positive whole number of clusters")
	}
	if f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
		return 0, fmt.Errorf("must be a positive whole number of clusters")
	}
	return int(f), nil
}
