package rules

import (
	"strings"
	"testing"
)

// TestEntrySyntax: one entry each, KEB's verdict from its SimpleParser
// (simple_parser.go, the attribute setters, RemoveWhitespaces), including the
// parser tests of KEB's parser_test_utils.go. A plan outside the plan table,
// which KEB's checkPlans refuses, is accepted with a warning (see
// TestUnknownPlanIsAWarning).
func TestEntrySyntax(t *testing.T) {
	cases := []struct {
		entry  string
		valid  bool
		reason string // a part of the reason, for refused entries and warnings
	}{
		{"azure", true, ""},
		{"azure(PR=westeurope)", true, ""},
		{"azure(HR=westeurope)", true, ""},
		{"azure(PR=easteurope,HR=westeurope)", true, ""},
		{"azure(HR=westeurope,PR=easteurope)", true, ""},
		{"azure->S", true, ""},
		{"azure->EU", true, ""},
		{"azure->S,EU", true, ""},
		{"azure->EU,S", true, ""},
		{"azure(PR=westeurope)->EU", true, ""},
		{"azure(PR=westeurope, HR=easteurope)->EU,S", true, ""},
		{"aws(PR=cf-eu11, HR=westeu) -> EU, S, PR, HR", true, ""},
		{"a ws ( PR = cf-eu11 ) - > E U", true, ""}, // blanks vanish everywhere
		{"\taws\r\n", true, ""},
		{"aws(PR=x)y", true, ""}, // PR is "x)y", as in KEB
		{"build-runtime-alicloud", true, ""},
		{"()", false, "names no plan"},
		{"->", false, "names no plan"},
		{"", false, "names no plan"},
		{"   ", false, "names no plan"},
		{"aws()", false, "empty input attribute"}, // KEB refuses it, though its docs show it
		{"test(,)->,", false, "empty input attribute"},
		{"aws(PR=west,HR=east)->,", false, "empty output attribute"},
		{"aws->", false, "empty output attribute"},
		{"aws->EU->S", false, `more than one "->"`},
		{"aws((PR=x))", false, `more than one "("`},
		{"aws(PR=x))", false, `more than one ")"`},
		{"aws(PR=x", false, `"(" without ")"`},
		{"awsPR=x)", false, `"(" without ")"`},
		{"aws(PR)", false, "not NAME=VALUE"},
		{"aws(PR=a=b)", false, "not NAME=VALUE"},
		{"aws(XR=a)", false, `unknown input attribute "XR"`},
		{"aws(pr=a)", false, `unknown input attribute "pr"`},
		{"aws(S=a)", false, `unknown input attribute "S"`},
		{"aws(PR=a,PR=b)", false, "input PR twice"},
		{"aws(HR=a,HR=a)", false, "input HR twice"},
		{"aws(PR=)", false, "PR has an empty value"},
		{"aws->X", false, `unknown output attribute "X"`},
		{"aws->s", false, `unknown output attribute "s"`},
		{"aws->PR=cf-eu11", false, `unknown output attribute "PR=cf-eu11"`},
		{"aws->S,S", false, "output S twice"},
		{"aws->HR,PR,HR", false, "output HR twice"},
		{"AWS", true, `plan "AWS" is not in the job's plan table`},
		{"own_cluster", true, `plan "own_cluster" is not in the job's plan table`},
		{"aws)(PR=x", true, `plan "aws)" is not in the job's plan table`},
		{"\vaws", true, "is not in the job's plan table"}, // KEB keeps a vertical tab
	}
	for _, tc := range cases {
		t.Run(tc.entry, func(t *testing.T) {
			rs, errs := parse([]string{tc.entry})
			if (len(errs) == 0) != tc.valid {
				t.Fatalf("valid = %v, want %v:\n%s", len(errs) == 0, tc.valid, joinErrors(errs))
			}
			if !tc.valid && !strings.Contains(errs[0].Reason, tc.reason) {
				t.Fatalf("reason %q does not say %q", errs[0].Reason, tc.reason)
			}
			warnings := rs.Warnings()
			if tc.valid && (len(warnings) > 0) != (tc.reason != "") {
				t.Fatalf("warnings %v, want one saying %q", warnings, tc.reason)
			}
			if len(warnings) > 0 && !strings.Contains(warnings[0].Reason, tc.reason) {
				t.Fatalf("warning %q does not say %q", warnings[0].Reason, tc.reason)
			}
		})
	}
}

func TestEntryFields(t *testing.T) {
	cases := []struct {
		entry string
		want  Rule
	}{
		{"aws", Rule{Plan: "aws"}},
		{"aws(PR=cf-eu11, HR=westeu) -> EU, S, PR, HR", Rule{Plan: "aws", PlatformRegion: "cf-eu11", HyperscalerRegion: "westeu",
			EUAccess: true, Shared: true, AppendPlatformRegion: true, AppendHyperscalerRegion: true}},
		{"sap-converged-cloud -> HR, S", Rule{Plan: "sap-converged-cloud", Shared: true, AppendHyperscalerRegion: true}},
		{"sap-converged-cloud(HR=*) -> S", Rule{Plan: "sap-converged-cloud", HyperscalerRegion: "*", Shared: true}},
		{"aws(PR=x)y", Rule{Plan: "aws", PlatformRegion: "x)y"}},
	}
	for _, tc := range cases {
		t.Run(tc.entry, func(t *testing.T) {
			rs, errs := parse([]string{tc.entry})
			if len(errs) != 0 {
				t.Fatal(joinErrors(errs))
			}
			tc.want.Text = tc.entry
			if got := rs.Rules()[0]; got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestErrorsNameTheirEntry: one error per bad entry, in list order, each with
// the entry's index and text; list problems last.
func TestErrorsNameTheirEntry(t *testing.T) {
	entries := []string{"aws", "aws(", "gcp", "gcp -> S", "nope(", "aws(HR=y)", "aws(PR=x)"}
	opts := defaultOptions()
	opts.RequiredPlans = []string{"azure", "aws", "azure"}
	_, errs := ParseWith(entries, opts)
	want := []struct {
		index  int
		reason string
	}{
		{1, `"(" without ")"`},
		{3, `applies to exactly the runtimes hap.rule[2] "gcp" applies to`},
		{4, `"(" without ")"`},
		{6, `with hap.rule[5] "aws(HR=y)" for a runtime in platform region "x" and hyperscaler region "y" (add aws(PR=x, HR=y))`},
		{noEntry, `no entry for plan "azure"`},
	}
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d:\n%s", len(errs), len(want), joinErrors(errs))
	}
	for i, w := range want {
		e := errs[i]
		if e.Index != w.index || !strings.Contains(e.Reason, w.reason) {
			t.Errorf("error %d: %v; want index %d saying %q", i, e, w.index, w.reason)
		}
		if e.Index != noEntry && e.Entry != entries[e.Index] {
			t.Errorf("error %d names %q, entry %d is %q", i, e.Entry, e.Index, entries[e.Index])
		}
	}
	if got := errs[1].Error(); got != `hap.rule[3] "gcp -> S": applies to exactly the runtimes hap.rule[2] "gcp" applies to (outputs do not tell entries apart); keep one of them` {
		t.Errorf("Error() = %s", got)
	}
}
