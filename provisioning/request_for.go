package provisioning

import (
	"errors"
	"fmt"
	"strings"
)

// PoolMatcher evaluates KEB's rule list (hap.rule) for one runtime: the
// hyperscalerType and euAccess KEB searches, whether it searches the shared
// bindings, and whether any entry applies. The job's rules package provides
// one (rules.RuleSet's MatchPool); the interface keeps this package free of
// everything but the standard library.
type PoolMatcher interface {
	MatchPool(plan, platformRegion, hyperscalerRegion string) (hyperscalerType string, euAccess, shared, ok bool)
}

// ErrNoRule means no entry of the rule list applies to the runtime: KEB
// fails such a provisioning, there is no fallback pool.
var ErrNoRule = errors.New("no entry of hap.rule applies to the runtime")

// RequestFor returns the Request NextBinding takes for a runtime of the
// plan in these regions: the pool the rules name, and the GA whose bindings
// to choose from, or "" when the rule sends the runtime to a shared pool.
func RequestFor(rules PoolMatcher, instanceID, globalAccountID, plan, platformRegion, hyperscalerRegion string) (Request, error) {
	if rules == nil {
		return Request{}, errors.New("request for a runtime: no rules")
	}
	if strings.TrimSpace(instanceID) == "" || strings.TrimSpace(globalAccountID) == "" {
		return Request{}, fmt.Errorf("request for a runtime of plan %q: instance id %q and global account %q must both be set", plan, instanceID, globalAccountID)
	}
	hyperscalerType, euAccess, shared, ok := rules.MatchPool(plan, platformRegion, hyperscalerRegion)
	if !ok {
		return Request{}, fmt.Errorf("plan %q, platform region %q, hyperscaler region %q: %w", plan, platformRegion, hyperscalerRegion, ErrNoRule)
	}
	req := Request{InstanceID: instanceID, GlobalAccountID: globalAccountID, HyperscalerType: hyperscalerType, EUAccess: euAccess}
	if shared {
		req.GlobalAccountID = ""
	}
	return req, nil
}
