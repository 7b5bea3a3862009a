package rules

import (
	"fmt"
	"sort"
	"strings"
)

// rejectDuplicates marks every rule whose inputs an earlier rule already has
// (KEB's checkUniqueness) and returns the others.
func rejectDuplicates(rules []Rule, bad map[int]string) []Rule {
	first := map[inputs]Rule{}
	var unique []Rule
	for _, r := range rules {
		if earlier, seen := first[r.inputs()]; seen {
			bad[r.Index] = fmt.Sprintf("applies to exactly the runtimes hap.rule[%d] %q applies to (outputs do not tell entries apart); keep one of them",
				earlier.Index, earlier.Text)
			continue
		}
		first[r.inputs()] = r
		unique = append(unique, r)
	}
	return unique
}

// rejectAmbiguous marks rules that leave some runtime to two equally specific
// rules (KEB's checkUnambiguity): an entry naming only PR and one naming only
// HR, of the same plan, both apply to a runtime in both regions unless an entry
// naming both regions exists. The later entry of each such pair is marked,
// with every entry that would resolve it.
func rejectAmbiguous(rules []Rule, bad map[int]string) {
	both := map[inputs]bool{}
	var prOnly, hrOnly []Rule
	for _, r := range rules {
		switch {
		case r.PlatformRegion != "" && r.HyperscalerRegion != "":
			both[r.inputs()] = true
		case r.PlatformRegion != "":
			prOnly = append(prOnly, r)
		case r.HyperscalerRegion != "":
			hrOnly = append(hrOnly, r)
		}
	}
	conflicts := map[int][]string{}
	var order []int
	for _, p := range prOnly {
		for _, h := range hrOnly {
			resolving := inputs{p.Plan, p.PlatformRegion, h.HyperscalerRegion}
			if p.Plan != h.Plan || both[resolving] {
				continue
			}
			later, other := p, h
			if h.Index > p.Index {
				later, other = h, p
			}
			if _, seen := conflicts[later.Index]; !seen {
				order = append(order, later.Index)
			}
			conflicts[later.Index] = append(conflicts[later.Index], fmt.Sprintf(
				"with hap.rule[%d] %q for a runtime in platform region %q and hyperscaler region %q (add %s)",
				other.Index, other.Text, p.PlatformRegion, h.HyperscalerRegion, resolving))
		}
	}
	for _, i := range order {
		if _, already := bad[i]; !already {
			bad[i] = "is as specific as another entry, so KEB cannot choose between them: " + strings.Join(conflicts[i], "; ")
		}
	}
}

// entryWarnings returns, for each entry of an accepted list, what KEB accepts
// but the job cannot follow fully or that does not do what it seems to: a
// plan not in the plan table (unknownPlan), an input "*" (starWarning).
func entryWarnings(rules []Rule) []EntryError {
	var out []EntryError
	for _, r := range rules {
		var reasons []string
		if !knownPlan(r.Plan) {
			reasons = append(reasons, unknownPlan(r.Plan))
		}
		if attrs := r.starInputs(); len(attrs) > 0 {
			reasons = append(reasons, starWarning(r, attrs))
		}
		if len(reasons) > 0 {
			out = append(out, EntryError{Index: r.Index, Entry: r.Text, Reason: strings.Join(reasons, "; and ")})
		}
	}
	return out
}

func unknownPlan(plan string) string {
	return fmt.Sprintf("plan %q is not in the job's plan table, taken from KEB's PlanIDsMapping (internal/broker/plans.go) at %s (%s). "+
		"KEB refuses a list with a plan its own PlanIDsMapping lacks (checkPlans), so either KEB does not start with this list, "+
		"or it is newer than the table and accepts it. The job keeps the entry: it applies to runtimes whose provider type "+
		"the caller gives, but the job cannot name the pools it sends runtimes to (the pool view, its metrics and "+
		"pool_not_in_rules do not know them)", plan, PlanTableSource, strings.Join(plans(), ", "))
}

func starWarning(r Rule, attrs []string) string {
	return fmt.Sprintf("names %s as an input; KEB (common/hyperscaler/rules) reads \"*\" literally, not as a wildcard, "+
		"so the entry applies only to a runtime whose region is the text \"*\" and to no real runtime: a runtime no other entry "+
		"applies to fails in KEB's resolve step with \"no matching rule for provisioning attributes\". What the older wildcard meant (any region, appended to hyperscalerType) is written %s today",
		strings.Join(attrs, " and "), todaysForm(r))
}

// todaysForm writes in today's language what the entry meant in the older
// rule form: each "*" input left out (any region) and that region appended
// by the output of the same name.
func todaysForm(r Rule) string {
	in := r.inputs()
	if in.platformRegion == star {
		in.platformRegion = ""
		r.AppendPlatformRegion = true
	}
	if in.hyperscalerRegion == star {
		in.hyperscalerRegion = ""
		r.AppendHyperscalerRegion = true
	}
	var outs []string
	for _, o := range []struct {
		set  bool
		name string
	}{{r.Shared, attrShared}, {r.EUAccess, attrEUAccess}, {r.AppendPlatformRegion, attrPlatformRegion}, {r.AppendHyperscalerRegion, attrHyperscalerRegion}} {
		if o.set {
			outs = append(outs, o.name)
		}
	}
	if len(outs) == 0 {
		return in.String()
	}
	return in.String() + " -> " + strings.Join(outs, ", ")
}

// listProblems finds what is wrong with the list as a whole: KEB refuses an
// empty list (IsRulesetValid needs at least one rule) and a required plan
// without an entry (checkPlans, second half).
func listProblems(entries []string, parsed []Rule, required []string) []EntryError {
	if len(entries) == 0 {
		return []EntryError{{Index: noEntry, Reason: "is empty; KEB needs at least one entry to start"}}
	}
	covered := map[string]bool{}
	for _, r := range parsed {
		covered[r.Plan] = true
	}
	var errs []EntryError
	for _, plan := range sortedUnique(required) {
		if !covered[plan] {
			errs = append(errs, EntryError{Index: noEntry,
				Reason: fmt.Sprintf("has no entry for plan %q, which KEB offers; add one such as %s", plan, plan)})
		}
	}
	return errs
}

func sortedUnique(names []string) []string {
	set := map[string]bool{}
	var out []string
	for _, n := range names {
		if !set[n] {
			set[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
