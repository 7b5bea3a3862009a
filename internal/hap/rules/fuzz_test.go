package rules

import (
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// FuzzParse: whatever the list (entries separated by ";", as KEB's validator
// takes them on its command line), Parse, Match and Pools never panic; every
// error and every warning names an entry of the list by index and exact
// text, at most one error per entry; only an empty list has an error naming no entry (no plan is
// required by default); a refused list applies to nothing; and in an accepted
// list every entry applies to a runtime in its own regions, or a more specific
// entry does.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"aws -> EU, S; aws(PR=cf-eu11) -> EU",
		strings.Join(initialConfiguration, ";"),
		"aws; aws(PR=cf-eu11); aws(HR=eastus)",
		"aws(HR=aa, PR=cf); aws(PR=cf, HR=aa); gcp; gcp",
		"aws(PR=*, HR=test1); aws(PR=test2, HR=*); aws(PR=*, HR=t); aws(PR=*, HR=*); aws; aws(PR=test2, HR=test1)",
		"aws(); ->; (); aws((PR=x)); aws(PR=x)y; aws)(PR=x; \vaws",
		"trial -> S; free; sap-converged-cloud -> HR, S; nope(PR=a) -> PR",
		"gdch; gdch(PR=*) -> EU; sap-converged-cloud(HR=*) -> S",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, list string) {
		var entries []string
		if list != "" {
			entries = strings.Split(list, ";")
		}
		rs, errs := parse(entries)
		seen := map[int]bool{}
		for _, e := range errs {
			if e.Index == noEntry {
				if len(entries) != 0 || e.Entry != "" {
					t.Fatalf("an error names no entry in a non-empty list: %v", e)
				}
				continue
			}
			if e.Index < 0 || e.Index >= len(entries) || e.Entry != entries[e.Index] {
				t.Fatalf("error %v does not name an entry of %q", e, entries)
			}
			if seen[e.Index] {
				t.Fatalf("two errors for entry %d: %s", e.Index, joinErrors(errs))
			}
			if e.Reason == "" {
				t.Fatalf("error %v gives no reason", e)
			}
			seen[e.Index] = true
		}
		_ = rs.Pools(nil)
		if len(errs) > 0 {
			if len(rs.Rules()) != 0 {
				t.Fatalf("a refused list kept %d rules", len(rs.Rules()))
			}
			return
		}
		for _, w := range rs.Warnings() {
			if w.Index < 0 || w.Index >= len(entries) || w.Entry != entries[w.Index] || w.Reason == "" {
				t.Fatalf("warning %v does not name an entry of %q", w, entries)
			}
		}
		for _, r := range rs.Rules() {
			pr, hr := orAny(r.PlatformRegion), orAny(r.HyperscalerRegion)
			provider := "a-newer-provider" // a plan the table does not have
			if known := possibleProviders(r.Plan); known != nil {
				provider = known[0]
			}
			got, ok := rs.MatchProvider(r.Plan, provider, pr, hr)
			if !ok {
				t.Fatalf("no entry applies to %s's own runtime (%q, %q)", r.Text, pr, hr)
			}
			if winner := rs.Rules()[got.Index]; winner.openInputs() > r.openInputs() {
				t.Fatalf("%q won over the more specific %q", winner.Text, r.Text)
			}
			_ = rs.Pools([]hap.Pool{got.Pool, {HyperscalerType: got.Pool.HyperscalerType + "_x_y"}, {HyperscalerType: "_"}})
		}
	})
}

func orAny(region string) string {
	if region == "" {
		return "any-region"
	}
	return region
}
