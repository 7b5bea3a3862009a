package rules

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// The examples of KEB's rule documentation, docs/contributor/03-11-hap-rules.md
// in kyma-project/kyma-environment-broker (the version describing the PR and HR
// outputs), and of its EU access page: each list, KEB's verdict, and where a
// runtime lands, as the comments beside the examples state.

// initialConfiguration is the documentation's "Initial Configuration".
var initialConfiguration = []string{
	"aws",
	"build-runtime-aws",
	"aws(PR=cf-eu11) -> EU",
	"build-runtime-aws(PR=cf-eu11) -> EU",
	"azure",
	"build-runtime-azure",
	"azure(PR=cf-ch20) -> EU",
	"build-runtime-azure(PR=cf-ch20) -> EU",
	"gcp",
	"build-runtime-gcp",
	"gcp(PR=cf-sa30) -> PR",
	"build-runtime-gcp(PR=cf-sa30) -> PR",
	"trial -> S",
	"sap-converged-cloud -> HR, S",
	"azure_lite",
	"preview",
	"free",
}

func TestDocsVerdicts(t *testing.T) {
	checkVerdicts(t, []verdictCase{
		{name: "label selector example", valid: true, rules: []string{"gcp", "aws(PR=cf-eu11) -> EU", "gcp(PR=cf-eu30) -> EU,S"}},
		{name: "platform region output", valid: true, rules: []string{"gcp(PR=cf-sa30) -> PR"}},
		{name: "platform region input only", valid: true, rules: []string{"gcp(PR=cf-sa30)"}},
		{name: "hyperscaler region output", valid: true, rules: []string{"gcp(HR=us-central1) -> HR"}},
		{name: "shared and EU access", valid: true, rules: []string{"gcp -> S", "azure(PR=cf-ch20) -> EU, PR"}},
		{name: "uniqueness example", valid: false, bad: []int{1, 3}, rules: []string{
			"gcp",
			"gcp -> S",               // invalid: outputs do not make it unique
			"gcp(HR=europe-west3)",   // valid: the HR input makes it unique
			"gcp(HR=europe-west3)"}}, // invalid: a duplicate
		{name: "priority example", valid: true, rules: []string{
			"aws -> S", "aws(PR=cf-eu11) -> EU, PR", "aws(PR=cf-eu11, HR=westeu) -> EU, S, PR, HR"}},
		{name: "initial configuration", valid: true, rules: initialConfiguration},
		{name: "EU access page", valid: true, rules: []string{
			"aws(PR=cf-eu11) -> EU", "azure(PR=cf-ch20) -> EU", "sap-converged-cloud -> S, HR"}},
		{name: "without parentheses", valid: true, rules: []string{"aws"}},
		// The documentation calls aws() valid and equal to aws; KEB's parser
		// refuses it (the empty parentheses hold one empty attribute).
		{name: "empty parentheses", valid: false, bad: []int{0}, rules: []string{"aws()"}},
	})
}

// runtime is a provisioning request as the rules see it. provider is the
// provider type KEB's provider values give; "" lets Providers decide.
type runtime struct {
	plan, provider, platformRegion, hyperscalerRegion string
}

type landing struct {
	rule   string
	pool   hap.Pool
	shared bool
}

type evalCase struct {
	name  string
	rules []string
	in    runtime
	want  *landing // nil: no entry applies
}

func TestDocsEvaluation(t *testing.T) {
	dedicated := func(ht string) hap.Pool { return hap.Pool{HyperscalerType: ht} }
	eu := func(ht string) hap.Pool { return hap.Pool{HyperscalerType: ht, EUAccess: true} }
	cases := []evalCase{
		{"label selector: gcp", []string{"gcp", "aws(PR=cf-eu11) -> EU", "gcp(PR=cf-eu30) -> EU,S"},
			runtime{"gcp", "", "cf-eu10", "europe-west3"}, &landing{"gcp", dedicated("gcp"), false}},
		{"label selector: aws in cf-eu11", []string{"gcp", "aws(PR=cf-eu11) -> EU", "gcp(PR=cf-eu30) -> EU,S"},
			runtime{"aws", "", "cf-eu11", "eu-central-1"}, &landing{"aws(PR=cf-eu11) -> EU", eu("aws"), false}},
		{"label selector: gcp in cf-eu30", []string{"gcp", "aws(PR=cf-eu11) -> EU", "gcp(PR=cf-eu30) -> EU,S"},
			runtime{"gcp", "", "cf-eu30", "europe-west3"}, &landing{"gcp(PR=cf-eu30) -> EU,S", eu("gcp"), true}},
		{"label selector: no entry for aws elsewhere", []string{"gcp", "aws(PR=cf-eu11) -> EU", "gcp(PR=cf-eu30) -> EU,S"},
			runtime{"aws", "", "cf-eu10", "eu-central-1"}, nil},
		{"PR output appends the platform region", []string{"gcp(PR=cf-sa30) -> PR"},
			runtime{"gcp", "", "cf-sa30", "me-central2"}, &landing{"gcp(PR=cf-sa30) -> PR", dedicated("gcp_cf-sa30"), false}},
		{"PR input alone appends nothing", []string{"gcp(PR=cf-sa30)"},
			runtime{"gcp", "", "cf-sa30", "me-central2"}, &landing{"gcp(PR=cf-sa30)", dedicated("gcp"), false}},
		{"PR input alone selects", []string{"gcp(PR=cf-sa30)"},
			runtime{"gcp", "", "cf-us21", "us-central1"}, nil},
		{"HR output appends the hyperscaler region", []string{"gcp(HR=us-central1) -> HR"},
			runtime{"gcp", "", "cf-us21", "us-central1"}, &landing{"gcp(HR=us-central1) -> HR", dedicated("gcp_us-central1"), false}},
		{"shared gcp", []string{"gcp -> S", "azure(PR=cf-ch20) -> EU, PR"},
			runtime{"gcp", "", "cf-eu10", "europe-west3"}, &landing{"gcp -> S", dedicated("gcp"), true}},
		{"azure in cf-ch20", []string{"gcp -> S", "azure(PR=cf-ch20) -> EU, PR"},
			runtime{"azure", "", "cf-ch20", "switzerlandnorth"}, &landing{"azure(PR=cf-ch20) -> EU, PR", eu("azure_cf-ch20"), false}},
	}
	priority := []string{"aws -> S", "aws(PR=cf-eu11) -> EU, PR", "aws(PR=cf-eu11, HR=westeu) -> EU, S, PR, HR"}
	cases = append(cases, []evalCase{
		{"priority: plan only", priority, runtime{"aws", "", "cf-eu10", "eu-central-1"},
			&landing{"aws -> S", dedicated("aws"), true}},
		{"priority: platform region wins over plan", priority, runtime{"aws", "", "cf-eu11", "eu-central-1"},
			&landing{"aws(PR=cf-eu11) -> EU, PR", eu("aws_cf-eu11"), false}},
		{"priority: both regions win", priority, runtime{"aws", "", "cf-eu11", "westeu"},
			&landing{"aws(PR=cf-eu11, HR=westeu) -> EU, S, PR, HR", eu("aws_cf-eu11_westeu"), true}},
	}...)
	initial := []struct {
		in   runtime
		want landing
	}{
		{runtime{"aws", "", "cf-eu10", "eu-central-1"}, landing{"aws", dedicated("aws"), false}},
		{runtime{"build-runtime-aws", "", "cf-us11", "ap-northeast-1"}, landing{"build-runtime-aws", dedicated("aws"), false}},
		{runtime{"aws", "", "cf-eu11", "eu-central-1"}, landing{"aws(PR=cf-eu11) -> EU", eu("aws"), false}},
		{runtime{"build-runtime-aws", "", "cf-eu11", "eu-central-1"}, landing{"build-runtime-aws(PR=cf-eu11) -> EU", eu("aws"), false}},
		{runtime{"azure", "", "cf-eu20", "eastus"}, landing{"azure", dedicated("azure"), false}},
		{runtime{"build-runtime-azure", "", "cf-us20", "westus2"}, landing{"build-runtime-azure", dedicated("azure"), false}},
		{runtime{"azure", "", "cf-ch20", "switzerlandnorth"}, landing{"azure(PR=cf-ch20) -> EU", eu("azure"), false}},
		{runtime{"build-runtime-azure", "", "cf-ch20", "switzerlandnorth"}, landing{"build-runtime-azure(PR=cf-ch20) -> EU", eu("azure"), false}},
		{runtime{"gcp", "", "cf-us21", "asia-southeast1"}, landing{"gcp", dedicated("gcp"), false}},
		{runtime{"build-runtime-gcp", "", "cf-us21", "us-central1"}, landing{"build-runtime-gcp", dedicated("gcp"), false}},
		{runtime{"gcp", "", "cf-sa30", "me-central2"}, landing{"gcp(PR=cf-sa30) -> PR", dedicated("gcp_cf-sa30"), false}},
		{runtime{"build-runtime-gcp", "", "cf-sa30", "me-central2"}, landing{"build-runtime-gcp(PR=cf-sa30) -> PR", dedicated("gcp_cf-sa30"), false}},
		{runtime{"trial", "", "cf-us20", "eastus"}, landing{"trial -> S", dedicated("azure"), true}},        // KEB's default trial provider
		{runtime{"trial", "aws", "cf-eu10", "eu-central-1"}, landing{"trial -> S", dedicated("aws"), true}}, // a request naming AWS
		{runtime{"sap-converged-cloud", "", "cf-eu20-staging", "eu-de-1"}, landing{"sap-converged-cloud -> HR, S", dedicated("openstack_eu-de-1"), true}},
		{runtime{"sap-converged-cloud", "", "cf-eu01", "eu-de-2"}, landing{"sap-converged-cloud -> HR, S", dedicated("openstack_eu-de-2"), true}},
		{runtime{"azure_lite", "", "cf-us20", "westus"}, landing{"azure_lite", dedicated("azure"), false}},
		{runtime{"preview", "", "cf-eu10", "eu-central-1"}, landing{"preview", dedicated("aws"), false}},
		{runtime{"free", "", "cf-eu10", "eu-central-1"}, landing{"free", dedicated("aws"), false}},
		{runtime{"free", "azure", "cf-eu20", "westeurope"}, landing{"free", dedicated("azure"), false}},
	}
	for _, c := range initial {
		want := c.want
		cases = append(cases, evalCase{"initial configuration: " + c.in.plan + " " + c.in.provider + " " + c.in.platformRegion, initialConfiguration, c.in, &want})
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs, errs := parse(tc.rules)
			if len(errs) != 0 {
				t.Fatal(joinErrors(errs))
			}
			var got Result
			var ok bool
			if tc.in.provider == "" {
				got, ok = rs.Match(tc.in.plan, tc.in.platformRegion, tc.in.hyperscalerRegion)
			} else {
				got, ok = rs.MatchProvider(tc.in.plan, tc.in.provider, tc.in.platformRegion, tc.in.hyperscalerRegion)
			}
			if tc.want == nil {
				if ok {
					t.Fatalf("want no entry, got %+v", got)
				}
				return
			}
			if !ok {
				t.Fatal("no entry applies")
			}
			if got.Rule != tc.want.rule || got.Pool != tc.want.pool || got.Shared != tc.want.shared {
				t.Fatalf("got %q -> %v shared=%v; want %q -> %v shared=%v",
					got.Rule, got.Pool, got.Shared, tc.want.rule, tc.want.pool, tc.want.shared)
			}
			if tc.rules[got.Index] != got.Rule {
				t.Fatalf("index %d is %q, not %q", got.Index, tc.rules[got.Index], got.Rule)
			}
		})
	}
}
