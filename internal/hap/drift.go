package hap

import (
	"fmt"
	"sort"
)

// DecideDrift compares, for every binding name, KEB's database with Gardener
// and the binding's labels with its use and with KEB's selectors, and, for
// every (GA, pool) of the candidate rows (DecideCandidates of the same
// tally and policy), the job's rank 1 with KEB's own choice and KEB's
// guard. It returns every finding in a stable order.
func DecideDrift(t *Tally, p Policy, candidates []Candidate) []Finding {
	var out []Finding
	t.Each(func(u *Usage) {
		out = append(out, driftOf(u, p)...)
	})
	return append(out, groupFindings(candidates)...)
}

// groupFindings names the (GA, pool) groups KEB's guard stops and those
// whose rank 1 is not KEB's choice, on the group's rank 1 binding.
func groupFindings(candidates []Candidate) []Finding {
	var out []Finding
	for _, c := range candidates {
		if c.Rank == 1 && c.Guarded {
			out = append(out, Finding{BindingName: c.BindingName, GlobalAccountID: c.GlobalAccountID, Pool: c.Pool,
				Kind: KindProvisioningGuarded, DBCount: c.DBCount, ShootCount: c.ShootCount,
				Detail: fmt.Sprintf("the global account holds bindings in pool %s, none with an active instance of its own in KEB's database: KEB's guard (minBindingsForGuard) fails its provisioning there", c.Pool)})
		}
	}
	for _, d := range RankOneDeviations(candidates) {
		name := d.Job.Binding
		if name == "" {
			name = d.KEB.Binding
		}
		out = append(out, Finding{BindingName: name, GlobalAccountID: d.GlobalAccountID, Pool: d.Pool,
			Kind: KindRankOneDeviation, Detail: d.Reason})
	}
	return out
}

func driftOf(u *Usage, p Policy) []Finding {
	base := Finding{
		BindingName:    u.Name,
		DBCount:        u.Instances,
		ShootCount:     u.Shoots,
		DeletingShoots: u.Deleting,
	}
	with := func(kind FindingKind, ga, detail string) Finding {
		f := base
		f.Kind, f.GlobalAccountID, f.Detail = kind, ga, detail
		return f
	}
	b := u.Binding
	if b == nil {
		var out []Finding
		if u.Shoots > 0 {
			out = append(out, with(KindShootOnMissingBinding, "",
				fmt.Sprintf("%d shoot(s) reference a binding Gardener does not have", u.Shoots)))
		}
		for _, ga := range u.InstancesByGA.SortedGAs() {
			out = append(out, with(KindInstanceOnMissingBinding, ga,
				fmt.Sprintf("%d active instance(s) of %s reference a binding Gardener does not have", u.InstancesByGA.Of(ga), owner(ga))))
		}
		return out
	}

	base.Pool = b.Pool
	base.GlobalAccountID = b.GlobalAccountID
	var out []Finding
	if b.OutOfPool != "" {
		out = append(out, with(KindInNoPool, b.GlobalAccountID, b.OutOfPool))
	}
	if u.Instances != u.Shoots {
		out = append(out, with(KindCountMismatch, b.GlobalAccountID,
			fmt.Sprintf("database has %d active instance(s), Gardener has %d shoot(s) (%d being deleted)", u.Instances, u.Shoots, u.Deleting)))
	}
	inUse := !u.Empty()
	switch {
	case inUse && b.Dirty:
		out = append(out, with(KindDirtyBindingInUse, b.GlobalAccountID,
			"binding is marked dirty for cleanup but still holds clusters"))
	case inUse && b.Free():
		out = append(out, with(KindFreeBindingInUse, "",
			"binding is free in the pool (no tenantName) but holds clusters"))
	}
	if b.Claimed() && !b.Shared {
		out = append(out, crossTenant(u, b, with)...)
	}
	if limit, ok := p.limitOf(*b); ok && u.Effective() > limit {
		out = append(out, with(KindOverLimit, b.GlobalAccountID,
			fmt.Sprintf("binding holds %d cluster(s), limit is %d", u.Effective(), limit)))
	}
	return out
}

// crossTenant reports every GA other than the binding's tenant that owns
// instances in it, or shoots in it through their runtime ID.
func crossTenant(u *Usage, b *Binding, with func(FindingKind, string, string) Finding) []Finding {
	foreign := map[string]bool{}
	for _, c := range u.InstancesByGA {
		foreign[c.GlobalAccountID] = c.GlobalAccountID != b.GlobalAccountID
	}
	for _, c := range u.ShootOwners {
		foreign[c.GlobalAccountID] = foreign[c.GlobalAccountID] || c.GlobalAccountID != b.GlobalAccountID
	}
	var out []Finding
	for _, ga := range sortedKeys(foreign) {
		if !foreign[ga] {
			continue
		}
		out = append(out, with(KindCrossTenant, ga, fmt.Sprintf(
			"binding claimed by GA %s holds %d instance(s) and %d shoot(s) of %s",
			b.GlobalAccountID, u.InstancesByGA.Of(ga), u.ShootOwners.Of(ga), owner(ga))))
	}
	return out
}

// owner names the owner of instances in a finding's detail.
func owner(ga string) string {
	if ga == NoOwner {
		return "no GA (owner columns NULL or empty: KEB counts them for no global account)"
	}
	return "GA " + ga
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// RuleCoverage is what drift needs of KEB's rule list: a finding for every
// binding in a pool no entry sends runtimes to (rules.RuleSet implements
// it).
type RuleCoverage interface {
	UnnamedPools(bindings []Binding) []Finding
}

// Findings decides every drift finding of a snapshot: the disagreements
// between KEB's database, Gardener and KEB's rules of choice
// (DecideDrift), and the bindings in pools no entry of the rule list draws
// from.
func Findings(t *Tally, p Policy, candidates []Candidate, bindings []Binding, rules RuleCoverage) []Finding {
	return append(DecideDrift(t, p, candidates), rules.UnnamedPools(bindings)...)
}
