package rules

import (
	"fmt"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// UnnamedPools returns a finding for every binding in a pool KEB reads that
// no entry of the list sends runtimes to: an orphan pool nobody draws from,
// whose accounts sit idle (or whose clusters KEB can no longer place next
// to). A list with no entries names no pool, and then nothing is reported:
// without rules there is nothing to compare with.
func (rs RuleSet) UnnamedPools(bindings []hap.Binding) []hap.Finding {
	if len(rs.rules) == 0 {
		return nil
	}
	existing := make([]hap.Pool, 0, len(bindings))
	for _, b := range bindings {
		existing = append(existing, b.Pool)
	}
	named := map[hap.PoolKey]bool{}
	for _, p := range rs.Pools(existing) {
		named[hap.PoolKey{Pool: p.Pool, Shared: p.Shared}] = true
	}
	var out []hap.Finding
	for _, b := range bindings {
		if b.OutOfPool != "" || named[hap.PoolKey{Pool: b.Pool, Shared: b.Shared}] {
			continue
		}
		kind := "dedicated"
		if b.Shared {
			kind = "shared"
		}
		out = append(out, hap.Finding{BindingName: b.Name, GlobalAccountID: b.GlobalAccountID, Pool: b.Pool, Kind: hap.KindPoolNotInRules,
			Detail: fmt.Sprintf("no entry of hap.rule sends runtimes to the %s pool hyperscalerType=%s, euAccess=%t", kind, b.Pool.HyperscalerType, b.Pool.EUAccess)})
	}
	return out
}
