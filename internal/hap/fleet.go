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
	// Usage holds the shoots of each binding the per-binding series cover:
	// at 30,000 bindings a run holds this until it exits.
	Usage []BindingUsage
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

// BindingUsage is what one binding holds: its shoots in Gardener.
type BindingUsage struct {
	Binding         string
	GlobalAccountID string
	Pool            Pool
	Shoots          int
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
// candidate rows as DecideCandidates returns them (grouped by GA and pool)
// and its pool statistics (DecidePools). The same inputs always give the
// same figures, in a stable order.
//
// Every slice is sized before it is filled and the per-GA figures are
// counted over each group's rows, with no map keyed by every GA: the fleet
// is built at the end of a run, where the heap peaks (9 MB of maps and
// grown slices at 30,836 bindings before), and a grown slice would hold
// up to a quarter more than it needs until the next run replaces it.
func FleetOf(t *Tally, candidates []Candidate, stats []PoolStats, skippedObjects []Skipped) Fleet {
	inUsage := func(u *Usage) bool {
		b := u.Binding
		return b != nil && (b.Claimed() || b.Shared || !u.Empty())
	}
	usages, gaGroups := 0, 0
	t.Each(func(u *Usage) {
		if inUsage(u) {
			usages++
		}
	})
	eachGroup(candidates, func(rows []Candidate) {
		if rows[0].GlobalAccountID != "" {
			gaGroups++
		}
	})
	f := Fleet{Usage: make([]BindingUsage, 0, usages), BindingsPerGA: make([]PoolFigure, 0, gaGroups),
		SelectablePerGA: make([]PoolFigure, 0, gaGroups)}
	t.Each(func(u *Usage) {
		if b := u.Binding; inUsage(u) {
			f.Usage = append(f.Usage, BindingUsage{b.Name, b.GlobalAccountID, b.Pool, u.Shoots})
		}
	})
	// A GA's rows are its bindings KEB's tenant selector returns.
	eachGroup(candidates, func(rows []Candidate) {
		ga, pool := rows[0].GlobalAccountID, rows[0].Pool
		if ga == "" {
			return
		}
		selectable := 0
		for _, c := range rows {
			if c.Selectable {
				selectable++
			}
		}
		f.BindingsPerGA = append(f.BindingsPerGA, PoolFigure{ga, pool, float64(len(rows))})
		f.SelectablePerGA = append(f.SelectablePerGA, PoolFigure{ga, pool, float64(selectable)})
	})
	// A dedicated pool is listed while KEB's selectors return any of its
	// bindings, an exhausted one with 0 free.
	for _, s := range stats {
		if !s.Shared && s.Free+s.Claimed > 0 {
			f.Available = append(f.Available, PoolFigure{Pool: s.Pool, Value: float64(s.Free)})
		}
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
