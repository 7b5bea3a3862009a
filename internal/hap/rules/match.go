package rules

import "github.com/kyma-project/hap-reconciler/internal/hap"

// Result is where KEB takes a runtime's binding from.
type Result struct {
	// Rule is the entry that applies, as written; Index its position.
	Rule  string
	Index int
	// Pool holds the hyperscalerType and euAccess labels KEB searches.
	Pool hap.Pool
	// Shared: KEB searches the shared bindings of the pool (shared: true)
	// instead of the global account's own.
	Shared bool
}

// Match finds the entry KEB applies to a runtime of the plan in these regions,
// on the provider KEB's provider values give it when its request names none
// (Providers.ProviderType: trial on the default trial provider, free on the
// platform region's); false when none applies (KEB then fails the
// provisioning: there is no fallback) or KEB gives the runtime no provider.
func (rs RuleSet) Match(plan, platformRegion, hyperscalerRegion string) (Result, bool) {
	providerType, err := rs.providers.ProviderType(plan, "", platformRegion)
	if err != nil {
		return Result{}, false
	}
	return rs.MatchProvider(plan, providerType, platformRegion, hyperscalerRegion)
}

// MatchProvider is Match for a runtime whose provider type the caller knows,
// as KEB does: its resolve step passes the provider values' ProviderType as
// the Hyperscaler attribute (provisioningAttributesFromOperationData in
// internal/process/provisioning/resolve_credentials_binding.go), the base
// ruleset.go's toResult appends the regions to. Any plan works here, one the
// plan table does not have included.
//
// Of the entries of the plan that apply, KEB takes the one leaving the fewest
// inputs open, the first in list order on a tie
// (MatchProvisioningAttributesWithValidRuleset: a stable sort on MatchAnyCount).
// In a list KEB accepts no two applying entries tie.
func (rs RuleSet) MatchProvider(plan, providerType, platformRegion, hyperscalerRegion string) (Result, bool) {
	best := -1
	for i, r := range rs.rules {
		if r.Plan != plan || !r.applies(platformRegion, hyperscalerRegion) {
			continue
		}
		if best < 0 || r.openInputs() < rs.rules[best].openInputs() {
			best = i
		}
	}
	if best < 0 {
		return Result{}, false
	}
	r := rs.rules[best]
	return Result{
		Rule:  r.Text,
		Index: r.Index,
		Pool: hap.Pool{
			HyperscalerType: r.hyperscalerType(providerType, platformRegion, hyperscalerRegion),
			EUAccess:        r.EUAccess,
		},
		Shared: r.Shared,
	}, true
}
