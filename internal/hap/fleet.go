package hap

import (
	"cmp"
	"slices"
)

// Fleet is what the metrics job exposes of one run: the fleet's figures,
// decided once and purely from the snapshot, the candidate rows and the
// pool view. Each field feeds the metric families that expose it.
type Fleet struct {
	// BindingsPerGA: per GA and pool, the bindings KEB's tenant selector
	// returns for it.
	BindingsPerGA []PoolFigure
	// Usage holds the shoots and instances of each binding the per-binding
	// series cover, both in one entry: at 30,000 bindings a run holds this
	// until it exits.
	Usage []BindingUsage
	// LimitPerBinding: the limit of every GA's binding that has one.
	LimitPerBinding []BindingFigure
	// SelectablePerGA: per GA and pool with limits, the bindings still
	// below their limit.
	SelectablePerGA []PoolFigure
	// Available: per dedicated pool, the free bindings KEB's claim selector
	// returns.
	Available []PoolFigure
	// Skipped counts the objects the run could not read, per kind.
	Skipped map[string]int
	// Pools is the pool view: bindings by state, rules, exhaustion.
	Pools []PoolFigures
}

// PoolFigure is a figure of one pool, or of one GA in one pool.
type PoolFigure struct {
	GlobalAccountID string
	Pool            Pool
	Value           float64
}

// BindingFigure is a figure of one binding.
type BindingFigure struct {
	Binding         string
	GlobalAccountID string
	Pool            Pool
	Value           float64
}

// BindingUsage is what one binding holds: its shoots in Gardener and its
// active instances in KEB's database.
type BindingUsage struct {
	Binding         string
	GlobalAccountID string
	Pool            Pool
	Shoots          int
	Instances       int
}

// PoolFigures is one pool of the pool view: its bindings by state, the
// rules that lead to it, and the days until it runs out (nil: not running
// out).
type PoolFigures struct {
	Key   PoolKey
	Rules []string
	// Unreachable: only entries naming "*" as an input lead here, so no
	// real runtime does (NamedPool.Unreachable).
	Unreachable    bool
	Free           int
	Claimed        int
	Dirty          int
	SharedBindings int
	NearlyFull     int
	DaysLeft       *float64
}

// FleetOf computes the fleet figures of one run from the snapshot, its
// candidate rows and its pool statistics (DecidePools). The same inputs
// always give the same figures, in a stable order.
func FleetOf(t *Tally, candidates []Candidate, stats []PoolStats, skippedObjects []Skipped) Fleet {
	type gaPool struct {
		ga   string
		pool Pool
	}
	claimed := map[gaPool]int{}
	var f Fleet
	t.Each(func(u *Usage) {
		b := u.Binding
		if b == nil {
			return
		}
		if b.Dedicated() && b.Claimed() {
			claimed[gaPool{b.GlobalAccountID, b.Pool}]++
		}
		if b.Claimed() || b.Shared || !u.Empty() {
			f.Usage = append(f.Usage, BindingUsage{b.Name, b.GlobalAccountID, b.Pool, u.Shoots, u.Instances})
		}
	})
	for k, n := range claimed {
		f.BindingsPerGA = append(f.BindingsPerGA, PoolFigure{k.ga, k.pool, float64(n)})
	}
	// A dedicated pool is listed while KEB's selectors return any of its
	// bindings, an exhausted one with 0 free.
	for _, s := range stats {
		if !s.Shared && s.Free+s.Claimed > 0 {
			f.Available = append(f.Available, PoolFigure{Pool: s.Pool, Value: float64(s.Free)})
		}
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
			f.LimitPerBinding = append(f.LimitPerBinding, BindingFigure{c.BindingName, c.GlobalAccountID, c.Pool, float64(*c.Limit)})
		}
	}
	for k, n := range selectable {
		f.SelectablePerGA = append(f.SelectablePerGA, PoolFigure{k.ga, k.pool, float64(n)})
	}
	f.Skipped = map[string]int{"CredentialsBinding": 0, "Shoot": 0}
	for _, s := range skippedObjects {
		f.Skipped[s.Kind]++
	}
	sortPoolFigures(f.BindingsPerGA)
	sortPoolFigures(f.Available)
	sortPoolFigures(f.SelectablePerGA)
	return f
}

func sortPoolFigures(vs []PoolFigure) {
	slices.SortFunc(vs, func(a, b PoolFigure) int {
		return cmp.Or(cmp.Compare(a.GlobalAccountID, b.GlobalAccountID),
			cmp.Compare(a.Pool.HyperscalerType, b.Pool.HyperscalerType),
			cmp.Compare(a.Pool.String(), b.Pool.String()))
	})
}
