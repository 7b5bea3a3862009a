package rules

import (
	"strings"
	"testing"
)

// The uniqueness and ambiguity tables of KEB's own tests
// (common/hyperscaler/rules/rules_service_test.go, TestValidRuleset_CheckUniqueness
// and TestValidRuleset_CheckAmbiguity in kyma-project/kyma-environment-broker):
// each list and how many problems KEB counts in it. KEB counts one duplicate
// per repeated entry and one ambiguity per missing resolving entry; Parse
// reports one error per entry, naming every missing resolving entry in it.

func TestKEBUniquenessCases(t *testing.T) {
	cases := []struct {
		name       string
		rules      []string
		duplicates int
	}{
		{"simple duplicate", []string{"aws", "aws"}, 1},
		{"four duplicates", []string{"aws", "aws", "aws", "aws"}, 3},
		{"outputs do not count", []string{"aws->EU", "aws->S"}, 1},
		{"duplicate with one attribute", []string{"aws(PR=x)", "aws(PR=x)"}, 1},
		{"no duplicate with one attribute", []string{"aws(PR=x)", "aws(PR=y)"}, 0},
		{"duplicate with two attributes", []string{"aws(PR=x,HR=y)", "aws(PR=x,HR=y)"}, 1},
		{"duplicate with two attributes reversed", []string{"aws(HR=y,PR=x)", "aws(PR=x,HR=y)"}, 1},
		{"no duplicate with two attributes reversed", []string{"aws(HR=y,PR=x)", "aws(PR=x,HR=z)"}, 0},
		{"reversed, with blanks", []string{"aws ( HR= y,PR=x)", "aws(\tPR =x,HR = y )"}, 1},
		{"two pairs, with blanks", []string{"aws ( HR= y,PR=x)", "aws(\tPR =x,HR = y )", "azure ( HR= a,PR=b)", "azure(\tPR =b,HR = a )"}, 2},
		{"not duplicate", []string{"aws", "azure"}, 0},
		{"duplicate amongst many", []string{"aws", "azure", "aws"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := parse(tc.rules)
			if got := countReasons(errs, "applies to exactly the runtimes"); got != tc.duplicates || len(errs) != tc.duplicates {
				t.Fatalf("%d duplicates (%d errors), want %d:\n%s", got, len(errs), tc.duplicates, joinErrors(errs))
			}
		})
	}
}

func TestKEBAmbiguityCases(t *testing.T) {
	cases := []struct {
		name      string
		rules     []string
		ambiguous int
	}{
		{"simple plan", []string{"aws"}, 0},
		{"basic ambiguity", []string{"aws(PR=x)", "aws(HR=y)"}, 1},
		{"basic ambiguity resolved", []string{"aws(PR=x)", "aws(HR=y)", "aws(PR=x,HR=y)"}, 0},
		{"resolved for another plan", []string{"aws(PR=x)", "aws(HR=y)", "azure(PR=x,HR=y)"}, 1},
		{"resolved for another region", []string{"aws(PR=x)", "aws(HR=y)", "aws(PR=x,HR=z)"}, 1},
		{"different plans", []string{"aws(PR=x)", "azure(HR=y)"}, 0},
		{"double ambiguity", []string{"aws(PR=x)", "aws(HR=y)", "aws(HR=z)"}, 2},
		{"double, one resolved", []string{"aws(PR=x)", "aws(HR=y)", "aws(HR=z)", "aws(PR=x,HR=y)"}, 1},
		{"double, both resolved", []string{"aws(PR=x)", "aws(HR=y)", "aws(HR=z)", "aws(PR=x,HR=y)", "aws(PR=x,HR=z)"}, 0},
		{"double, one resolved for another plan", []string{"aws(PR=x)", "aws(HR=y)", "aws(HR=z)", "aws(PR=x,HR=y)", "azure(PR=x,HR=z)"}, 1},
		{"quadruple ambiguity", []string{"aws(PR=v)", "aws(PR=x)", "aws(HR=y)", "aws(HR=z)"}, 4},
		{"quadruple, three missing", []string{"aws(PR=v)", "aws(PR=x)", "aws(HR=y)", "aws(HR=z)", "aws(PR=x,HR=y)"}, 3},
		{"quadruple, two missing", []string{"aws(PR=v)", "aws(PR=x)", "aws(HR=y)", "aws(HR=z)", "aws(PR=x,HR=y)", "aws(PR=x,HR=z)"}, 2},
		{"quadruple, one missing", []string{"aws(PR=v)", "aws(PR=x)", "aws(HR=y)", "aws(HR=z)", "aws(PR=x,HR=y)", "aws(PR=x,HR=z)", "aws(PR=v,HR=z)"}, 1},
		{"quadruple, all resolved", []string{"aws(PR=v)", "aws(PR=x)", "aws(HR=y)", "aws(HR=z)", "aws(PR=x,HR=y)", "aws(PR=x,HR=z)", "aws(PR=v,HR=z)", "aws(PR=v,HR=y)"}, 0},
		{"quadruple, one resolved for another plan", []string{"aws(PR=v)", "aws(PR=x)", "aws(HR=y)", "aws(HR=z)", "aws(PR=x,HR=y)", "azure(PR=x,HR=z)", "aws(PR=v,HR=z)", "aws(PR=v,HR=y)"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := parse(tc.rules)
			if got := countReasons(errs, "(add "); got != tc.ambiguous {
				t.Fatalf("%d missing resolving entries, want %d:\n%s", got, tc.ambiguous, joinErrors(errs))
			}
			if (len(errs) == 0) != (tc.ambiguous == 0) {
				t.Fatalf("verdict does not follow the ambiguities:\n%s", joinErrors(errs))
			}
		})
	}
}

// TestKEBPlanCases: KEB's TestRulesService_CheckPlans and the plan case of
// TestNewRulesService (same file), with KEB's plan names as allowed plans.
// KEB refuses the unknown plan; the job warns instead (warnings), since the
// plan may be one of a KEB newer than its plan table.
func TestKEBPlanCases(t *testing.T) {
	cases := []struct {
		name     string
		rules    []string
		required []string
		errors   int
		warnings int
	}{
		{"all good", []string{"aws", "azure"}, []string{"aws", "azure"}, 0, 0},
		{"missing required plan", []string{"aws", "azure"}, []string{"aws", "gcp"}, 1, 0},
		{"not known plan", []string{"aws", "unknown-plan"}, []string{"aws"}, 0, 1},
		{"empty list", []string{}, nil, 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := defaultOptions()
			opts.RequiredPlans = tc.required
			rs, errs := ParseWith(tc.rules, opts)
			if len(errs) != tc.errors || len(rs.Warnings()) != tc.warnings {
				t.Fatalf("%d errors and %d warnings, want %d and %d:\n%s\n%s", len(errs), len(rs.Warnings()), tc.errors, tc.warnings,
					joinErrors(errs), joinErrors(rs.Warnings()))
			}
		})
	}
}

func countReasons(errs []EntryError, marker string) int {
	n := 0
	for _, e := range errs {
		n += strings.Count(e.Reason, marker)
	}
	return n
}
