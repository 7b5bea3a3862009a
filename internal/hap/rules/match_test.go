package rules

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// TestOlderFormMeansSomethingElseToday: the validator's "Final Configuration"
// (test-cases.yaml) in the older form is still a valid list, but today
// gcp(PR=cf-sa30) appends nothing and sap-converged-cloud(HR=*) applies to no
// real runtime; the rewritten list restores the pools the older form meant.
func TestOlderFormMeansSomethingElseToday(t *testing.T) {
	older := []string{"gcp", "gcp(PR=cf-sa30)", "sap-converged-cloud(HR=*) -> S"}
	today := []string{"gcp", "gcp(PR=cf-sa30) -> PR", "sap-converged-cloud -> S, HR"}
	cases := []struct {
		rules []string
		in    runtime
		want  string // hyperscalerType; "" when no entry applies
	}{
		{older, runtime{plan: "gcp", platformRegion: "cf-sa30", hyperscalerRegion: "me-central2"}, "gcp"},
		{today, runtime{plan: "gcp", platformRegion: "cf-sa30", hyperscalerRegion: "me-central2"}, "gcp_cf-sa30"},
		{older, runtime{plan: "sap-converged-cloud", platformRegion: "cf-eu20", hyperscalerRegion: "eu-de-1"}, ""},
		{older, runtime{plan: "sap-converged-cloud", platformRegion: "cf-eu20", hyperscalerRegion: "*"}, "openstack"},
		{today, runtime{plan: "sap-converged-cloud", platformRegion: "cf-eu20", hyperscalerRegion: "eu-de-1"}, "openstack_eu-de-1"},
	}
	for _, tc := range cases {
		rs, errs := parse(tc.rules)
		if len(errs) != 0 {
			t.Fatal(joinErrors(errs))
		}
		got, ok := rs.Match(tc.in.plan, tc.in.platformRegion, tc.in.hyperscalerRegion)
		if ok != (tc.want != "") || got.Pool.HyperscalerType != tc.want {
			t.Errorf("%v with %q: got %q (applies %v), want %q", tc.in, tc.rules, got.Pool.HyperscalerType, ok, tc.want)
		}
	}
}

func TestMatchPrefersTheMostSpecificEntry(t *testing.T) {
	rules := []string{
		"aws(PR=*, HR=test1)", // "*" is a literal: applies only to a platform region "*"
		"aws(PR=test2, HR=*)",
		"aws",
		"aws(PR=test2, HR=test1) -> S",
		"aws(PR=test2) -> EU",
	}
	cases := []struct {
		pr, hr string
		want   int
	}{
		{"test2", "test1", 3},
		{"test2", "other", 4},
		{"test2", "*", 1},
		{"*", "test1", 0},
		{"other", "test1", 2},
		{"", "", 2},
	}
	rs, errs := parse(rules)
	if len(errs) != 0 {
		t.Fatal(joinErrors(errs))
	}
	for _, tc := range cases {
		got, ok := rs.Match("aws", tc.pr, tc.hr)
		if !ok || got.Index != tc.want {
			t.Errorf("PR=%q HR=%q: got entry %d (%v), want %d", tc.pr, tc.hr, got.Index, ok, tc.want)
		}
	}
}

func TestMatchNeedsTheProvider(t *testing.T) {
	rules := []string{"trial -> S", "free", "aws", "gdch -> S"}
	cases := []struct {
		name      string
		providers Providers
		plan, pr  string
		want      hap.Pool
		ok        bool
	}{
		{"trial on KEB's default", DefaultProviders(), "trial", "cf-eu10", hap.Pool{HyperscalerType: "azure"}, true},
		{"trial configured to AWS", Providers{Trial: "aws"}, "trial", "cf-eu10", hap.Pool{HyperscalerType: "aws"}, true},
		{"trial with a default KEB's trial does not have", Providers{}, "trial", "cf-eu10", hap.Pool{}, false},
		{"free in an AWS platform region", DefaultProviders(), "free", "cf-eu10", hap.Pool{HyperscalerType: "aws"}, true},
		{"free in an Azure platform region", DefaultProviders(), "free", "cf-eu20", hap.Pool{HyperscalerType: "azure"}, true},
		{"free in a GCP platform region: KEB has no free on GCP", DefaultProviders(), "free", "cf-us30", hap.Pool{}, false},
		{"gdch on its own provider", DefaultProviders(), "gdch", "cf-eu10", hap.Pool{HyperscalerType: "gdch"}, true},
		{"a plan without an entry", DefaultProviders(), "gcp", "cf-eu10", hap.Pool{}, false},
		{"a plan KEB does not have", DefaultProviders(), "nope", "cf-eu10", hap.Pool{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs, errs := ParseWith(rules, Options{Providers: tc.providers})
			if len(errs) != 0 {
				t.Fatal(joinErrors(errs))
			}
			got, ok := rs.Match(tc.plan, tc.pr, "eu-central-1")
			if ok != tc.ok || got.Pool != tc.want {
				t.Fatalf("got %v (%v), want %v (%v)", got.Pool, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRefusedListMatchesNothing(t *testing.T) {
	rs, errs := parse([]string{"aws", "aws"})
	if len(errs) == 0 {
		t.Fatal("a duplicate must be refused")
	}
	if got, ok := rs.Match("aws", "cf-eu10", "eu-central-1"); ok {
		t.Fatalf("KEB does not start on a refused list, yet %+v applies", got)
	}
	if pools := rs.Pools([]hap.Pool{{HyperscalerType: "aws"}}); len(pools) != 0 {
		t.Fatalf("a refused list names no pool, got %+v", pools)
	}
}

// TestProviderTable: the plan table is KEB's PlanIDsMapping at
// PlanTableSource, each plan with the provider type ValuesForPlanAndParameters
// gives it when the request names none.
func TestProviderTable(t *testing.T) {
	p := DefaultProviders()
	want := map[string]string{
		"aws": "aws", "build-runtime-aws": "aws", "preview": "aws",
		"azure": "azure", "build-runtime-azure": "azure", "azure_lite": "azure",
		"gcp": "gcp", "build-runtime-gcp": "gcp",
		"sap-converged-cloud": "openstack",
		"alicloud":            "alicloud", "build-runtime-alicloud": "alicloud",
		"gdch":  "gdch",
		"trial": "azure", "free": "aws",
	}
	for plan, provider := range want {
		if got, err := p.ProviderType(plan, "", "cf-eu10"); err != nil || got != provider {
			t.Errorf("%s: got %q (%v), want %q", plan, got, err, provider)
		}
	}
	if len(plans()) != len(want) {
		t.Errorf("Plans() = %v, want the %d plans above", plans(), len(want))
	}
	if _, err := p.ProviderType("own_cluster", "", "cf-eu10"); err == nil {
		t.Error("own_cluster has no hyperscaler account and is not in KEB's plan mapping")
	}
}

// KEB's rules, evaluated on the provider type KEB has decided for the
// runtime, give the pool KEB's resolve step searches: trial and free where
// KEB's provider values put them, a plan newer than the job's plan table
// by KEB's provider, and no pool for a plan without an entry.
func TestMatchProviderFollowsKEBsProviderValues(t *testing.T) {
	rs, errs := parse([]string{"aws", "aws(PR=cf-eu11) -> EU", "gcp(PR=cf-sa30) -> PR", "trial -> S", "free",
		"sap-converged-cloud -> S, HR", "gdch -> EU", "newplan -> PR"})
	if len(errs) > 0 {
		t.Fatal(joinErrors(errs))
	}
	type want struct {
		pool   hap.Pool
		shared bool
	}
	for _, tc := range []struct {
		plan, provider, platformRegion, hyperscalerRegion string
		want                                              want
	}{
		{"aws", "aws", "cf-us10", "us-east-1", want{hap.Pool{HyperscalerType: "aws"}, false}},
		{"aws", "aws", "cf-eu11", "eu-central-1", want{hap.Pool{HyperscalerType: "aws", EUAccess: true}, false}},
		{"gcp", "gcp", "cf-sa30", "me-central2", want{hap.Pool{HyperscalerType: "gcp_cf-sa30"}, false}},
		{"trial", "gcp", "cf-eu10", "europe-west3", want{hap.Pool{HyperscalerType: "gcp"}, true}},
		{"trial", "azure", "cf-eu10", "westeurope", want{hap.Pool{HyperscalerType: "azure"}, true}},
		{"free", "azure", "cf-eu20", "westeurope", want{hap.Pool{HyperscalerType: "azure"}, false}},
		{"sap-converged-cloud", "openstack", "cf-eu20", "eu-de-1", want{hap.Pool{HyperscalerType: "openstack_eu-de-1"}, true}},
		{"gdch", "gdch", "cf-eu10", "eu-1", want{hap.Pool{HyperscalerType: "gdch", EUAccess: true}, false}},
		{"newplan", "alicloud", "cf-cn40", "cn-beijing", want{hap.Pool{HyperscalerType: "alicloud_cf-cn40"}, false}},
	} {
		got, ok := rs.MatchProvider(tc.plan, tc.provider, tc.platformRegion, tc.hyperscalerRegion)
		if !ok || (want{got.Pool, got.Shared}) != tc.want {
			t.Errorf("%s on %s (%s, %s): %+v shared %t (matched %t); want %+v", tc.plan, tc.provider, tc.platformRegion,
				tc.hyperscalerRegion, got.Pool, got.Shared, ok, tc.want)
		}
	}
	if _, ok := rs.MatchProvider("azure", "azure", "cf-eu10", "westeurope"); ok {
		t.Error("a plan without an entry matched")
	}
}
