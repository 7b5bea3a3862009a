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

// rejectUnknownPlans marks rules for a plan KEB does not have (KEB's
// checkPlans, first half).
func rejectUnknownPlans(rules []Rule, bad map[int]string) {
	for _, r := range rules {
		if _, already := bad[r.Index]; already || KnownPlan(r.Plan) {
			continue
		}
		bad[r.Index] = fmt.Sprintf("plan %q is not one of KEB's plans (%s)", r.Plan, strings.Join(Plans(), ", "))
	}
}

// listProblems finds what is wrong with the list as a whole: KEB refuses an
// empty list (IsRulesetValid needs at least one rule) and a required plan
// without an entry (checkPlans, second half).
func listProblems(entries []string, parsed []Rule, required []string) []EntryError {
	if len(entries) == 0 {
		return []EntryError{{Index: NoEntry, Reason: "is empty; KEB needs at least one entry to start"}}
	}
	covered := map[string]bool{}
	for _, r := range parsed {
		covered[r.Plan] = true
	}
	var errs []EntryError
	for _, plan := range sortedUnique(required) {
		if !covered[plan] {
			errs = append(errs, EntryError{Index: NoEntry,
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
