package rules

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

func TestUnnamedPoolsAreTheOnesNoEntryDrawsFrom(t *testing.T) {
	rs, errs := parse([]string{"aws", "aws(PR=cf-eu11) -> EU", "sap-converged-cloud -> S, HR"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	bindings := []hap.Binding{
		{Name: "aws-1", Pool: hap.Pool{HyperscalerType: "aws"}, GlobalAccountID: "ga"},
		{Name: "aws-eu-1", Pool: hap.Pool{HyperscalerType: "aws", EUAccess: true}},
		{Name: "os-1", Pool: hap.Pool{HyperscalerType: "openstack_eu-de-1"}, Shared: true},
		{Name: "os-dedicated", Pool: hap.Pool{HyperscalerType: "openstack_eu-de-1"}, GlobalAccountID: "ga"},
		{Name: "gcp-1", Pool: hap.Pool{HyperscalerType: "gcp"}},
		{Name: "odd", Pool: hap.Pool{HyperscalerType: "gcp"}, OutOfPool: "label dirty has value \"false\""},
	}
	var got []string
	for _, f := range rs.UnnamedPools(bindings) {
		if f.Kind != hap.KindPoolNotInRules {
			t.Fatalf("kind %s", f.Kind)
		}
		got = append(got, f.BindingName)
	}
	if len(got) != 2 || got[0] != "os-dedicated" || got[1] != "gcp-1" {
		t.Fatalf("unnamed %v, want os-dedicated (only the shared openstack pool is named) and gcp-1", got)
	}
	if f := (RuleSet{}).UnnamedPools(bindings); f != nil {
		t.Fatalf("without rules nothing is unnamed: %v", f)
	}
}
