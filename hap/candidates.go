package hap

import (
	"cmp"
	"fmt"
	"slices"
)

// DecideCandidates ranks, per (GA, pool), the bindings provisioning may use,
// following KEB's rules:
//   - a GA with several bindings allowed fills the most populated binding
//     still below its limit; bindings at or above the limit stay listed but
//     are not selectable, and a GA with no selectable row claims a new binding;
//   - a GA without the feature has no limit and keeps using the binding KEB
//     uses today, the first by name;
//   - a shared pool (rows with an empty GA) uses its least used binding first.
//
// Dirty bindings and free ones are not candidates.
func DecideCandidates(t *Tally, p Policy) []Candidate {
	type group struct {
		ga   string
		pool Pool
	}
	groups := map[group][]Candidate{}
	t.Each(func(u *Usage) {
		b := u.Binding
		if b == nil || b.Dirty || (!b.Claimed() && !b.Shared) {
			return
		}
		c := Candidate{
			GlobalAccountID: b.GlobalAccountID,
			Pool:            b.Pool,
			BindingName:     b.Name,
			DBCount:         u.Instances,
			ShootCount:      u.Shoots,
			EffectiveCount:  u.Effective(),
			Selectable:      true,
		}
		if b.Shared {
			c.GlobalAccountID = ""
		}
		if limit, ok := p.limitOf(*b); ok {
			headroom := limit - c.EffectiveCount
			c.Limit, c.Headroom = &limit, &headroom
			c.Selectable = headroom > 0
		}
		k := group{c.GlobalAccountID, c.Pool}
		groups[k] = append(groups[k], c)
	})

	var out []Candidate
	for _, rows := range groups {
		slices.SortFunc(rows, candidateOrder(rows[0].GlobalAccountID == "", p.MultiAccount(rows[0].GlobalAccountID)))
		for i := range rows {
			rows[i].Rank = i + 1
		}
		out = append(out, rows...)
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		return cmp.Or(
			cmp.Compare(a.GlobalAccountID, b.GlobalAccountID),
			cmp.Compare(a.Pool.HyperscalerType, b.Pool.HyperscalerType),
			compareBool(a.Pool.EUAccess, b.Pool.EUAccess),
			cmp.Compare(a.Rank, b.Rank),
		)
	})
	return out
}

// candidateOrder returns the order of one group's rows; the first row is
// rank 1. Ties always go to the name that sorts first.
func candidateOrder(shared, multiAccount bool) func(a, b Candidate) int {
	switch {
	case shared:
		return func(a, b Candidate) int {
			return cmp.Or(cmp.Compare(a.EffectiveCount, b.EffectiveCount), cmp.Compare(a.BindingName, b.BindingName))
		}
	case multiAccount:
		return func(a, b Candidate) int {
			return cmp.Or(
				-compareBool(a.Selectable, b.Selectable),
				-cmp.Compare(a.EffectiveCount, b.EffectiveCount),
				cmp.Compare(a.BindingName, b.BindingName))
		}
	default:
		return func(a, b Candidate) int { return cmp.Compare(a.BindingName, b.BindingName) }
	}
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Choice is what provisioning would do for one (GA, pool) given its ranked
// rows: use Binding, or claim a new binding from the pool.
type Choice struct {
	Binding  string
	ClaimNew bool
}

// Choose reads rank 1 the way the provisioning read path does.
func Choose(rows []Candidate) Choice {
	for _, r := range rows {
		if r.Rank == 1 && r.Selectable {
			return Choice{Binding: r.BindingName}
		}
	}
	return Choice{ClaimNew: true}
}

// CandidatesSuspect returns why a snapshot must not replace the candidate
// table, or "". A namespace that lists no binding at all while KEB's database
// places clusters in bindings is a wrong namespace or a broken source, not an
// empty pool: replacing the table would send every provisioning off to
// claim a new binding.
func CandidatesSuspect(t *Tally) string {
	bindings := 0
	t.Each(func(u *Usage) {
		if u.Binding != nil {
			bindings++
		}
	})
	if bindings == 0 && t.InstancesTotal > 0 {
		return fmt.Sprintf("Gardener lists no credentials binding while KEB's database has %d active instance(s) on bindings", t.InstancesTotal)
	}
	return ""
}
