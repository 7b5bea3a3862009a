package provisioning

import (
	"errors"
	"fmt"
	"strings"
)

// PoolMatcher evaluates KEB's rule list (hap.rule) for one runtime: the
// hyperscalerType and euAccess KEB searches, whether it searches the shared
// bindings, and whether any entry applies. providerType is the base of the
// hyperscalerType, as KEB's rules take it (the Hyperscaler attribute,
// common/hyperscaler/rules/ruleset.go toResult). The job's rules package
// provides one (rules.RuleSet's MatchPool); the interface keeps this package
// free of everything but the standard library.
type PoolMatcher interface {
	MatchPool(plan, providerType, platformRegion, hyperscalerRegion string) (hyperscalerType string, euAccess, shared, ok bool)
}

// Runtime is what RequestFor needs to know of the runtime being provisioned,
// all of it known to KEB when it resolves the binding
// (provisioningAttributesFromOperationData in
// internal/process/provisioning/resolve_credentials_binding.go).
type Runtime struct {
	InstanceID      string
	GlobalAccountID string
	// Plan is the plan's name (aws, trial, gdch, ...).
	Plan string
	// ProviderType is the provider KEB has decided for the runtime, its
	// operation's ProviderValues.ProviderType (aws, azure, gcp, openstack,
	// alicloud, gdch): for trial the request's provider or KEB's default,
	// for free the platform's. It is the base of the hyperscalerType, and
	// only KEB knows it for every plan, so it is required.
	ProviderType      string
	PlatformRegion    string
	HyperscalerRegion string
}

// ErrNoRule means no entry of the rule list applies to the runtime: KEB
// fails such a provisioning, there is no fallback pool.
var ErrNoRule = errors.New("no entry of hap.rule applies to the runtime")

// RequestFor returns the Request NextBinding takes for the runtime: the pool
// the rules name, and the GA whose bindings to choose from, or "" when the
// rule sends the runtime to a shared pool.
func RequestFor(rules PoolMatcher, rt Runtime) (Request, error) {
	if rules == nil {
		return Request{}, errors.New("request for a runtime: no rules")
	}
	for _, field := range []struct{ name, value string }{
		{"InstanceID", rt.InstanceID}, {"GlobalAccountID", rt.GlobalAccountID}, {"ProviderType", rt.ProviderType},
	} {
		if strings.TrimSpace(field.value) == "" {
			return Request{}, fmt.Errorf("request for a runtime of plan %q: Runtime.%s is %q, it must be set", rt.Plan, field.name, field.value)
		}
	}
	hyperscalerType, euAccess, shared, ok := rules.MatchPool(rt.Plan, rt.ProviderType, rt.PlatformRegion, rt.HyperscalerRegion)
	if !ok {
		return Request{}, fmt.Errorf("plan %q, platform region %q, hyperscaler region %q: %w", rt.Plan, rt.PlatformRegion, rt.HyperscalerRegion, ErrNoRule)
	}
	req := Request{InstanceID: rt.InstanceID, GlobalAccountID: rt.GlobalAccountID, HyperscalerType: hyperscalerType, EUAccess: euAccess,
		ProviderType: rt.ProviderType}
	if shared {
		req.GlobalAccountID = ""
	}
	return req, nil
}
