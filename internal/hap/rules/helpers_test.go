package rules

import (
	"slices"
	"strings"
	"testing"
)

// verdictCase is a list and KEB's verdict on it. bad lists the entries Parse
// must reject (by index); it is checked only when set.
type verdictCase struct {
	name  string
	rules []string
	valid bool
	bad   []int
}

func checkVerdicts(t *testing.T, cases []verdictCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs, errs := parse(tc.rules)
			if got := len(errs) == 0; got != tc.valid {
				t.Fatalf("valid = %v, want %v; errors:\n%s", got, tc.valid, joinErrors(errs))
			}
			if tc.valid && len(rs.Rules()) != len(tc.rules) {
				t.Fatalf("kept %d rules of %d", len(rs.Rules()), len(tc.rules))
			}
			if !tc.valid && len(rs.Rules()) != 0 {
				t.Fatalf("a refused list must apply to nothing, kept %d rules", len(rs.Rules()))
			}
			if tc.bad != nil {
				if got := badIndexes(errs); !slices.Equal(got, tc.bad) {
					t.Fatalf("bad entries %v, want %v; errors:\n%s", got, tc.bad, joinErrors(errs))
				}
			}
		})
	}
}

func badIndexes(errs []EntryError) []int {
	out := []int{}
	for _, e := range errs {
		if e.Index != noEntry {
			out = append(out, e.Index)
		}
	}
	return out
}

func joinErrors(errs []EntryError) string {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = "  " + e.Error()
	}
	return strings.Join(lines, "\n")
}
