package rules

import "testing"

// TestKEBValidatorCases holds every case of KEB's rule validator,
// cmd/parser/rules/test-cases.yaml in kyma-project/kyma-environment-broker:
// the twelve cases of the version at commit 2c90bf6f24831150af864d20a0db56544de5a5ba
// (the version at 533cedbe293231750586a3e8854d3b1d3751af20 holds the first two),
// and the later version's rewrite of "Final Configuration" into today's output
// attributes. The rule lists are the file's; the verdict is the one KEB gives
// today. Where the file, written for the older validator in which "*" was a
// wildcard, recorded another verdict, fileSaid says so.
func TestKEBValidatorCases(t *testing.T) {
	cases := []struct {
		verdictCase
		fileSaid string // the verdict recorded in the file, when it differs
	}{
		{verdictCase: verdictCase{name: "Simple Rule", valid: true, rules: []string{
			"aws -> EU, S",
			"aws(PR=cf-eu11) -> EU",
		}}},
		{verdictCase: verdictCase{name: "Final Configuration", valid: true, rules: []string{
			"aws",
			"aws(PR=cf-eu11) -> EU",
			"azure",
			"azure(PR=cf-ch20) -> EU",
			"gcp",
			"gcp(PR=cf-sa30)",
			"trial -> S",
			"sap-converged-cloud(HR=*) -> S",
			"azure_lite",
			"preview",
			"free",
		}}},
		{verdictCase: verdictCase{name: "Final Configuration, today's outputs", valid: true, rules: []string{
			"aws",
			"aws(PR=cf-eu11) -> EU",
			"azure",
			"azure(PR=cf-ch20) -> EU",
			"gcp",
			"gcp(PR=cf-sa30) -> PR",
			"trial -> S",
			"sap-converged-cloud -> S, HR",
			"azure_lite",
			"preview",
			"free",
		}}},
		{verdictCase: verdictCase{name: "Duplicated Rule", valid: false, bad: []int{2}, rules: []string{
			"aws",
			"aws(PR=cf-eu11)",
			"aws(HR=eastus)", // needs aws(PR=cf-eu11, HR=eastus)
		}}},
		{verdictCase: verdictCase{name: "Simple Asterix Rule", valid: true, rules: []string{
			"aws",
			"aws(PR=*)", // "*" is a value today, not a wildcard
		}}, fileSaid: "invalid: aws(PR=*) duplicates aws"},
		{verdictCase: verdictCase{name: "Duplicated Rules", valid: false, bad: []int{1, 3}, rules: []string{
			"aws(HR=aa, PR=cf)",
			"aws(PR=cf, HR=aa)",
			"gcp",
			"gcp",
		}}},
		{verdictCase: verdictCase{name: "Duplicated Rules - No 2", valid: true, rules: []string{
			"aws(PR=*, HR=test1)",
			"aws(PR=test2, HR=*)",
			"aws(PR=*, HR=t)",
			"aws(PR=*, HR=*)",
			"aws",
			"aws(PR=test2, HR=test1)",
		}}, fileSaid: "invalid: aws(PR=*, HR=*) duplicates aws; aws(PR=*, HR=t) ambiguous with aws(PR=test2, HR=*)"},
		{verdictCase: verdictCase{name: "Unresolved Rule - No 2", valid: false, bad: []int{2}, rules: []string{
			"aws",
			"aws(PR=*)",
			"aws(HR=*)", // today: ambiguous with aws(PR=*), needs aws(PR=*, HR=*)
		}}},
		{verdictCase: verdictCase{name: "Resolved Rule - No 1", valid: true, rules: []string{
			"aws",
			"aws(PR=westeurope, HR=*)",
			"aws(PR=westeurope, HR=westeurope)",
		}}},
		{verdictCase: verdictCase{name: "Resolved Rule - No 2", valid: true, rules: []string{
			"aws",
			"aws(PR=cf-eu11)",
			"aws(PR=cf-eu11, HR=eastus)",
		}}},
		{verdictCase: verdictCase{name: "Resolved Rule - No 3", valid: true, rules: []string{
			"aws(PR=*)",
			"aws(PR=cf-eu11, HR=eastus)",
		}}},
		{verdictCase: verdictCase{name: "Resolved Rule - No 4", valid: true, rules: []string{
			"aws",
			"aws(PR=cf-eu11)",
			"aws(PR=cf-eu12, HR=eastus)",
		}}},
		{verdictCase: verdictCase{name: "unnamed last case", valid: true, rules: []string{
			"aws",
			"aws(PR=cf-eu11, HR=*)",
			"aws(PR=*, HR=eastus)",
			"aws(PR=cf-eu11, HR=eastus)",
		}}},
	}
	var plain []verdictCase
	for _, c := range cases {
		plain = append(plain, c.verdictCase)
		if c.fileSaid != "" {
			t.Logf("%s: valid today; the file, written for the older validator, said %s", c.name, c.fileSaid)
		}
	}
	checkVerdicts(t, plain)
}
