package metrics

import (
	"cmp"
	"slices"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// FleetOf computes the fleet figures of one run. It is pure: the same
// snapshot always gives the same series, in a stable order.
func FleetOf(t *hap.Tally, candidates []hap.Candidate, skippedObjects []hap.Skipped) Fleet {
	type gaPool struct {
		ga   string
		pool hap.Pool
	}
	claimed := map[gaPool]int{}
	free := map[hap.Pool]int{}
	var f Fleet
	t.Each(func(u *hap.Usage) {
		b := u.Binding
		if b == nil {
			return
		}
		if b.Dedicated() {
			free[b.Pool] += 0 // every dedicated pool is listed, exhausted ones with 0
		}
		switch {
		case b.Dedicated() && b.Claimed():
			claimed[gaPool{b.GlobalAccountID, b.Pool}]++
		case b.Free():
			free[b.Pool]++
		}
		if b.Claimed() || b.Shared || !u.Empty() {
			f.Usage = append(f.Usage, BindingUsage{b.Name, b.GlobalAccountID, b.Pool, u.Shoots, u.Instances})
		}
	})
	for k, n := range claimed {
		f.BindingsPerGA = append(f.BindingsPerGA, PoolValue{k.ga, k.pool, float64(n)})
	}
	for p, n := range free {
		f.Available = append(f.Available, PoolValue{Pool: p, Value: float64(n)})
	}
	selectable := map[gaPool]int{}
	for _, c := range candidates {
		if c.GlobalAccountID == "" {
			continue
		}
		k := gaPool{c.GlobalAccountID, c.Pool}
		selectable[k] += 0
		if c.Selectable {
			selectable[k]++
		}
		if c.Limit != nil {
			f.LimitPerBinding = append(f.LimitPerBinding, BindingValue{c.BindingName, c.GlobalAccountID, c.Pool, float64(*c.Limit)})
		}
	}
	for k, n := range selectable {
		f.SelectablePerGA = append(f.SelectablePerGA, PoolValue{k.ga, k.pool, float64(n)})
	}
	f.Skipped = map[string]int{"CredentialsBinding": 0, "Shoot": 0}
	for _, s := range skippedObjects {
		f.Skipped[s.Kind]++
	}
	sortPools(f.BindingsPerGA)
	sortPools(f.Available)
	sortPools(f.SelectablePerGA)
	return f
}

func sortPools(vs []PoolValue) {
	slices.SortFunc(vs, func(a, b PoolValue) int {
		return cmp.Or(cmp.Compare(a.GlobalAccountID, b.GlobalAccountID),
			cmp.Compare(a.Pool.HyperscalerType, b.Pool.HyperscalerType),
			cmp.Compare(a.Pool.String(), b.Pool.String()))
	})
}
