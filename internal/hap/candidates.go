package hap

import (
	"cmp"
	"slices"
)

// DecideCandidates ranks, per (GA, pool), the bindings provisioning may use,
// following KEB (internal/process/provisioning/resolve_credentials_binding.go):
//   - a GA with several bindings allowed fills the most populated binding
//     still below its limit (selectBindingBelowLimit); bindings at or above
//     the limit stay listed but are not selectable, and a GA with no
//     selectable row claims a new binding;
//   - the count of a GA's binding is its own active instances
//     (GetInstanceCountPerBinding), other GAs' rows left out, and the job
//     ranks by exactly that count;
//   - the one deliberate deviation: a binding whose shoots in Gardener are
//     at or above its limit is full, whatever KEB's database says, so the
//     job never fills an account KEB's count is behind on. The capacity a
//     pick checks (EffectiveCount, the larger of the two counts) follows
//     from it; RankOneDeviations names every group where this moves rank 1;
//   - with minBindingsForGuard, a GA holding at least that many bindings of
//     the pool, none with an active instance of its own, is guarded: KEB
//     fails its provisioning, so no row of the group may be picked;
//   - a GA without the feature has no limit and keeps using the first of its
//     bindings by name;
//   - a shared pool (rows with an empty GA) uses the binding fewest shoots
//     name in spec.credentialsBindingName, ties to the first name
//     (GetLeastUsedCredentialsBindingFromSecretBindings); dirty is no bar
//     there, KEB's shared selector does not read it.
//
// Bindings KEB's selectors never return (dirty, free, out of every pool) are
// not candidates. Names compare as bytes, as the API server lists them.
func DecideCandidates(t *Tally, p Policy) []Candidate {
	// One slice of the exact size, sorted once into groups and each group
	// into rank order: at 30,000 bindings a slice per group, or one grown
	// by appending, costs the run several times the table's megabytes.
	n := 0
	t.Each(func(u *Usage) {
		if _, ok := candidateOf(u, p); ok {
			n++
		}
	})
	out := make([]Candidate, 0, n)
	t.Each(func(u *Usage) {
		if c, ok := candidateOf(u, p); ok {
			out = append(out, c)
		}
	})
	slices.SortFunc(out, func(a, b Candidate) int {
		if g := compareGroups(a, b); g != 0 {
			return g
		}
		return candidateOrder(a.GlobalAccountID == "", p.MultiAccount(a.GlobalAccountID))(a, b)
	})
	eachGroup(out, func(rows []Candidate) {
		guarded := p.MultiAccount(rows[0].GlobalAccountID) && guardTrips(rows, p.MinBindingsForGuard)
		for i := range rows {
			rows[i].Rank = i + 1
			rows[i].Guarded = guarded
		}
	})
	return out
}

// eachGroup calls fn with each (GA, pool)'s run of rows, in order; rows
// come grouped, as DecideCandidates returns them.
func eachGroup(rows []Candidate, fn func([]Candidate)) {
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && compareGroups(rows[start], rows[end]) == 0 {
			end++
		}
		fn(rows[start:end])
		start = end
	}
}

// candidateOf is the row u's binding gets, if KEB's selectors return it.
func candidateOf(u *Usage, p Policy) (Candidate, bool) {
	b := u.Binding
	switch {
	case b == nil:
		return Candidate{}, false
	case b.InSharedPool():
		return Candidate{Pool: b.Pool, BindingName: b.Name, DBCount: u.Instances, ShootCount: u.Shoots,
			EffectiveCount: u.CredentialsShoots, Selectable: true}, true
	case b.Dedicated() && b.Claimed():
		own := u.OwnInstances(b.GlobalAccountID)
		c := Candidate{GlobalAccountID: b.GlobalAccountID, Pool: b.Pool, BindingName: b.Name, DBCount: own,
			ShootCount: u.Shoots, EffectiveCount: max(own, u.Shoots), Selectable: true}
		if limit, ok := p.limitOf(*b); ok {
			headroom := limit - c.EffectiveCount
			c.Limit, c.Headroom = &limit, &headroom
			c.Selectable = headroom > 0
		}
		return c, true
	}
	return Candidate{}, false
}

// compareGroups orders rows by GA and pool, the table's order of groups.
func compareGroups(a, b Candidate) int {
	return cmp.Or(
		cmp.Compare(a.GlobalAccountID, b.GlobalAccountID),
		cmp.Compare(a.Pool.HyperscalerType, b.Pool.HyperscalerType),
		compareBool(a.Pool.EUAccess, b.Pool.EUAccess),
	)
}

// guardTrips is KEB's guard (resolveWithMultiAccountSupport): at least min
// bindings, and not one active instance of the GA's own on any of them.
func guardTrips(rows []Candidate, min int) bool {
	if min <= 0 || len(rows) < min {
		return false
	}
	for _, r := range rows {
		if r.DBCount > 0 {
			return false
		}
	}
	return true
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
		// KEB's measure, the GA's own instances, ranks; shoots only decide
		// Selectable (a binding Gardener shows full is never rank 1).
		return func(a, b Candidate) int {
			return cmp.Or(
				-compareBool(a.Selectable, b.Selectable),
				-cmp.Compare(a.DBCount, b.DBCount),
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
// rows: use Binding, claim a new binding from the pool, or nothing at all
// because the guard stops the GA's provisioning.
type Choice struct {
	Binding  string
	ClaimNew bool
	Guarded  bool
}

func (c Choice) String() string {
	switch {
	case c.Guarded:
		return "guarded"
	case c.ClaimNew:
		return "claim new"
	}
	return c.Binding
}

// Choose reads rank 1 the way the provisioning read path does.
func Choose(rows []Candidate) Choice {
	for _, r := range rows {
		if r.Guarded {
			return Choice{Guarded: true}
		}
		if r.Rank == 1 && r.Selectable {
			return Choice{Binding: r.BindingName}
		}
	}
	return Choice{ClaimNew: true}
}
