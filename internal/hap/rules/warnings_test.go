package rules

import (
	"errors"
	"strings"
	"testing"
)

func TestUnknownPlanIsAWarning(t *testing.T) {
	entries := []string{"aws", "newplan(PR=cf-eu10) -> S, PR"}
	rs, errs := parse(entries)
	if len(errs) != 0 {
		t.Fatalf("KEB newer than the plan table accepts the list, so must the job:\n%s", joinErrors(errs))
	}
	warnings := rs.Warnings()
	if len(warnings) != 1 {
		t.Fatalf("want one warning, got %v", warnings)
	}
	w := warnings[0]
	if got := w.Error(); !strings.HasPrefix(got, `hap.rule[1] "newplan(PR=cf-eu10) -> S, PR": `) {
		t.Errorf("the warning does not name the entry: %s", got)
	}
	for _, want := range []string{`plan "newplan"`, PlanTableSource, "cannot name the pools"} {
		if !strings.Contains(w.Reason, want) {
			t.Errorf("the warning does not say %q: %s", want, w.Reason)
		}
	}
	got, ok := rs.MatchProvider("newplan", "aws", "cf-eu10", "eu-central-1")
	if !ok || got.Pool.HyperscalerType != "aws_cf-eu10" || !got.Shared {
		t.Errorf("with the provider given, the entry applies as KEB applies it: %+v, %v", got, ok)
	}
	if _, ok := rs.Match("newplan", "cf-eu10", "eu-central-1"); ok {
		t.Error("without a provider the job cannot tell the pool of a plan it does not know")
	}
	for _, p := range rs.Pools(nil) {
		for _, r := range p.Rules {
			if r == entries[1] {
				t.Errorf("the entry of an unknown plan names pool %+v", p)
			}
		}
	}
}

func TestStarInputIsAWarning(t *testing.T) {
	cases := []struct {
		entry string
		say   []string // "" entry: no warning
	}{
		{"sap-converged-cloud(HR=*) -> S", []string{"HR=*", "literally", "no real runtime", "no matching rule", "sap-converged-cloud -> S, HR"}},
		{"aws(PR=*, HR=*)", []string{"PR=* and HR=*", "aws -> PR, HR"}},
		{"gcp(PR=*, HR=me-central2) -> EU", []string{"PR=*", "gcp(HR=me-central2) -> EU, PR"}},
		{"aws(PR=cf-eu11) -> EU", nil},
		{"aws(PR=x*)", nil},
	}
	for _, tc := range cases {
		t.Run(tc.entry, func(t *testing.T) {
			rs, errs := parse([]string{tc.entry})
			if len(errs) != 0 {
				t.Fatal(joinErrors(errs))
			}
			warnings := rs.Warnings()
			if len(warnings) != min(len(tc.say), 1) {
				t.Fatalf("warnings %v, want %d", warnings, min(len(tc.say), 1))
			}
			for _, want := range tc.say {
				if !strings.Contains(warnings[0].Error(), want) {
					t.Errorf("warning does not say %q: %s", want, warnings[0])
				}
			}
		})
	}
}

func TestProviderTypeAsKEBsProviderValues(t *testing.T) {
	cases := []struct {
		plan, requested, platformRegion string
		providers                       Providers
		want                            string
		refused                         string // ProviderError.Input when refused
	}{
		{"gdch", "", "cf-eu10", DefaultProviders(), "gdch", ""},
		{"gdch", "GDCH", "cf-eu10", DefaultProviders(), "gdch", ""},
		{"aws", "azure", "cf-eu10", DefaultProviders(), "", FromRequest},
		{"sap-converged-cloud", "SapConvergedCloud", "cf-eu20", DefaultProviders(), "openstack", ""},
		{"trial", "", "cf-eu10", DefaultProviders(), "azure", ""},
		{"trial", "", "cf-eu10", Providers{Trial: "gcp"}, "gcp", ""},
		{"trial", "AWS", "cf-eu10", DefaultProviders(), "aws", ""},
		{"trial", "openstack", "cf-eu10", DefaultProviders(), "", FromRequest},
		{"trial", "", "cf-eu10", Providers{}, "", FromTrialDefault},
		{"free", "", "cf-eu10", DefaultProviders(), "aws", ""},
		{"free", "", "cf-eu20", DefaultProviders(), "azure", ""},
		{"free", "", "cf-ap21", DefaultProviders(), "azure", ""},
		{"free", "", "cf-us30", DefaultProviders(), "", FromPlatformRegion},
		{"free", "", "cf-eu01", DefaultProviders(), "", FromPlatformRegion},
		{"free", "", "nodigit", DefaultProviders(), "", FromPlatformRegion},
		{"free", "azure", "cf-eu10", DefaultProviders(), "azure", ""},
		{"free", "gcp", "cf-eu10", DefaultProviders(), "", FromRequest},
		{"newplan", "alicloud", "cf-eu10", DefaultProviders(), "alicloud", ""},
		{"newplan", "", "cf-eu10", DefaultProviders(), "", FromPlan},
		{"aws", "quantum", "cf-eu10", DefaultProviders(), "", FromRequest},
	}
	for _, tc := range cases {
		got, err := tc.providers.ProviderType(tc.plan, tc.requested, tc.platformRegion)
		var pe *ProviderError
		switch {
		case tc.refused == "" && (err != nil || got != tc.want):
			t.Errorf("%s %q %s: got %q, %v; want %q", tc.plan, tc.requested, tc.platformRegion, got, err, tc.want)
		case tc.refused != "" && (err == nil || !errors.As(err, &pe) || pe.Input != tc.refused || pe.Plan != tc.plan):
			t.Errorf("%s %q %s: got %q, %v; want a refusal of the %s", tc.plan, tc.requested, tc.platformRegion, got, err, tc.refused)
		}
	}
}

// TestTrialProviderOfKEB: KEB's trial switch compares the CloudProvider
// exactly, so only its own spellings give a default.
func TestTrialProviderOfKEB(t *testing.T) {
	for value, want := range map[string]string{"AWS": "aws", "Azure": "azure", "GCP": "gcp", "aws": "", "azure": "", "SapConvergedCloud": "", "": ""} {
		got, ok := TrialProviderOfKEB(value)
		if got != want || ok != (want != "") {
			t.Errorf("%q: got %q, %v; want %q", value, got, ok, want)
		}
	}
}
