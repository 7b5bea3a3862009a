package rules

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// kebModel states KEB's rule engine independently of this package, step by
// step as kyma-environment-broker's common/hyperscaler/rules runs it:
// processAndValidate (rules_service.go) stops at the first kind of problem,
// parse errors, then checkUniqueness, checkUnambiguity and checkPlans
// (ruleset.go); MatchProvisioningAttributesWithValidRuleset takes the rules of
// the plan, sorted stably by MatchAnyCount, and the first whose inputs match
// (PatternAttribute.Match: an absent input matches anything, any other value,
// "*" included, only itself); toResult appends "_<PR>" and "_<HR>" to the
// Hyperscaler attribute. It works on generated entries, whose fields the
// generator knows, so it needs no parser of its own.
type kebModel struct {
	rules     []genEntry
	malformed bool // some entry does not parse
}

// genEntry is one generated entry: its fields and its text.
type genEntry struct {
	text                       string
	plan, pr, hr               string
	shared, eu, prOut, hrOut   bool
	malformed, knownToKEBTable bool
}

func (e genEntry) matchAny() int {
	n := 0
	if e.pr == "" {
		n++
	}
	if e.hr == "" {
		n++
	}
	return n
}

func (e genEntry) key() string { return fmt.Sprintf("%s(PR=%s,HR=%s)", e.plan, e.pr, e.hr) }

// problems returns KEB's verdict: "" when it accepts the list, else the kind
// of the first problem it stops at.
func (m kebModel) problems() string {
	if m.malformed {
		return "parse"
	}
	if len(m.rules) == 0 {
		return "empty"
	}
	seen := map[string]bool{}
	for _, r := range m.rules {
		if seen[r.key()] {
			return "duplicate"
		}
		seen[r.key()] = true
	}
	for _, p := range m.rules {
		for _, h := range m.rules {
			if p.matchAny() == 1 && h.matchAny() == 1 && p.pr != "" && h.hr != "" && p.plan == h.plan {
				union := genEntry{plan: p.plan, pr: p.pr, hr: h.hr}
				if !seen[union.key()] {
					return "ambiguous"
				}
			}
		}
	}
	for _, r := range m.rules {
		if !r.knownToKEBTable {
			return "plan"
		}
	}
	return ""
}

// match is KEB's choice for a runtime whose provider values give hyperscaler.
func (m kebModel) match(plan, hyperscaler, pr, hr string) (Result, bool) {
	var forPlan []genEntry
	var index []int
	for i, r := range m.rules {
		if r.plan == plan {
			forPlan = append(forPlan, r)
			index = append(index, i)
		}
	}
	order := make([]int, len(forPlan))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return forPlan[a].matchAny() - forPlan[b].matchAny() })
	for _, i := range order {
		r := forPlan[i]
		if (r.pr == "" || r.pr == pr) && (r.hr == "" || r.hr == hr) {
			ht := hyperscaler
			if r.prOut {
				ht += "_" + pr
			}
			if r.hrOut {
				ht += "_" + hr
			}
			res := Result{Rule: r.text, Index: index[i], Shared: r.shared}
			res.Pool.HyperscalerType, res.Pool.EUAccess = ht, r.eu
			return res, true
		}
	}
	return Result{}, false
}

// Regions the generator draws from, with the provider KEB's platformProvider
// gives each platform region (its first digit).
var (
	genPlatformRegions = map[string]string{"cf-eu10": "aws", "cf-eu20": "azure", "cf-sa30": "gcp", "cf-eu01": "openstack", "cf-cn40": "alicloud", "*": ""}
	genHyperscaler     = []string{"eu-central-1", "westeurope", "me-central2", "*"}
	genPlans           = append(plans(), "newplan", "AWS")
)

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

func genList(r *rand.Rand) ([]string, kebModel) {
	prs := make([]string, 0, len(genPlatformRegions))
	for pr := range genPlatformRegions {
		prs = append(prs, pr)
	}
	slices.Sort(prs)
	var m kebModel
	var texts []string
	n := r.IntN(7)
	// Few plans per list, so that duplicates and ambiguities come up.
	plans := []string{pick(r, genPlans), pick(r, genPlans), pick(r, []string{"trial", "free", "gdch"})}
	for range n {
		e := genEntry{plan: pick(r, plans)}
		e.knownToKEBTable = knownPlan(e.plan)
		if r.IntN(2) == 0 {
			e.pr = pick(r, prs)
		}
		if r.IntN(2) == 0 {
			e.hr = pick(r, genHyperscaler)
		}
		e.shared, e.eu, e.prOut, e.hrOut = r.IntN(3) == 0, r.IntN(3) == 0, r.IntN(4) == 0, r.IntN(4) == 0
		e.malformed = r.IntN(40) == 0
		e.text = e.write(r)
		m.malformed = m.malformed || e.malformed
		m.rules = append(m.rules, e)
		texts = append(texts, e.text)
	}
	return texts, m
}

// write spells the entry as an operator might: inputs in either order,
// blanks anywhere KEB deletes them; a malformed entry gets an empty value.
func (e genEntry) write(r *rand.Rand) string {
	blank := func() string { return pick(r, []string{"", "", " ", "\t"}) }
	var in []string
	if e.pr != "" {
		in = append(in, "PR="+blank()+e.pr)
	}
	if e.hr != "" {
		in = append(in, "HR"+blank()+"="+e.hr)
	}
	if e.malformed {
		in = append(in, "HR=")
	}
	if r.IntN(2) == 0 {
		slices.Reverse(in)
	}
	text := e.plan + blank()
	if len(in) > 0 {
		text += "(" + strings.Join(in, ","+blank()) + ")"
	}
	var out []string
	for _, o := range []struct {
		on   bool
		name string
	}{{e.shared, "S"}, {e.eu, "EU"}, {e.prOut, "PR"}, {e.hrOut, "HR"}} {
		if o.on {
			out = append(out, o.name)
		}
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	if len(out) > 0 {
		text += blank() + "->" + blank() + strings.Join(out, ","+blank())
	}
	return text
}

// TestAgreesWithKEBOnRandomLists: KEB's rule language (kebModel) and this
// package agree on every list the generator makes: on the verdict (except
// that a plan outside the plan table is a warning for each such entry, not a
// refusal), and, on a list KEB accepts, on the entry and pool for runtimes of
// every plan, gdch included, on every provider KEB can give it, trial and
// free with explicit providers too. A pool marked unreachable receives no
// runtime of a known plan with real regions.
func TestAgreesWithKEBOnRandomLists(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 7))
	accepted, matched := 0, 0
	verdicts := map[string]int{}
	for range 4000 {
		entries, m := genList(r)
		rs, errs := parse(entries)
		verdict := m.problems()
		verdicts[verdict]++
		if jobAccepts := len(errs) == 0; jobAccepts != (verdict == "" || verdict == "plan") {
			t.Fatalf("%q: KEB's verdict %q, the job's errors:\n%s", entries, verdict, joinErrors(errs))
		}
		if verdict == "plan" {
			for i, e := range m.rules {
				if !e.knownToKEBTable && !slices.ContainsFunc(rs.Warnings(), func(w EntryError) bool { return w.Index == i }) {
					t.Fatalf("%q: entry %d's plan is outside the table, yet no warning: %v", entries, i, rs.Warnings())
				}
			}
		}
		if len(errs) != 0 {
			continue
		}
		accepted++
		unreachable := map[hap.PoolKey]bool{}
		var landed []Result
		for _, plan := range genPlans {
			providers := possibleProviders(plan)
			if providers == nil {
				providers = []string{"alicloud"} // a newer KEB's plan: KEB gives the provider
			}
			for _, provider := range providers {
				for pr, prProvider := range genPlatformRegions {
					for _, hr := range genHyperscaler {
						want, wantOK := m.match(plan, provider, pr, hr)
						got, gotOK := rs.MatchProvider(plan, provider, pr, hr)
						if gotOK != wantOK || got != want {
							t.Fatalf("%q: %s on %s in %q/%q: job %+v (%v), KEB %+v (%v)", entries, plan, provider, pr, hr, got, gotOK, want, wantOK)
						}
						if gotOK {
							matched++
							// Pools cannot name the pools of a plan outside the
							// table (its warning says so).
							if pr != star && hr != star && knownPlan(plan) {
								landed = append(landed, got)
							}
						}
						// Without a provider, trial takes KEB's default and
						// free the platform region's.
						if (plan == planFree && provider == prProvider) || (plan == planTrial && provider == ProviderAzure) {
							if got, ok := rs.Match(plan, pr, hr); ok != wantOK || got != want {
								t.Fatalf("%q: %s in %q/%q without a provider: %+v (%v), KEB %+v (%v)", entries, plan, pr, hr, got, ok, want, wantOK)
							}
						}
					}
				}
			}
		}
		existing := make([]hap.Pool, 0, len(landed))
		for _, l := range landed {
			existing = append(existing, l.Pool)
		}
		for _, p := range rs.Pools(existing) {
			unreachable[hap.PoolKey{Pool: p.Pool, Shared: p.Shared}] = p.Unreachable
		}
		for _, l := range landed {
			if unreachable[hap.PoolKey{Pool: l.Pool, Shared: l.Shared}] {
				t.Fatalf("%q: %q sends a real runtime to %+v, which Pools calls unreachable", entries, l.Rule, l.Pool)
			}
		}
	}
	for _, kind := range []string{"", "parse", "empty", "duplicate", "ambiguous", "plan"} {
		if verdicts[kind] < 100 {
			t.Errorf("only %d lists with verdict %q (%v): the generator is too thin", verdicts[kind], kind, verdicts)
		}
	}
	if matched < 10000 {
		t.Errorf("only %d runtimes matched: the generator is too thin", matched)
	}
}
