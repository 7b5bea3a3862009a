package provisioning_test

import (
	"errors"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
	"github.com/kyma-project/hap-reconciler/provisioning"
)

// KEB's rules, evaluated, give NextBinding's request; the rules come from
// the job's parser of KEB's rule language.
func TestRequestForFollowsKEBsRules(t *testing.T) {
	rs, errs := rules.Parse([]string{"aws", "aws(PR=cf-eu11) -> EU", "gcp(PR=cf-sa30) -> PR", "trial -> S", "sap-converged-cloud -> S, HR"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	tests := []struct {
		plan, pr, hr string
		want         provisioning.Request
	}{
		{"aws", "cf-us10", "us-east-1", provisioning.Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "aws"}},
		{"aws", "cf-eu11", "eu-central-1", provisioning.Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "aws", EUAccess: true}},
		{"gcp", "cf-sa30", "me-central2", provisioning.Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "gcp_cf-sa30"}},
		{"trial", "cf-eu10", "westeurope", provisioning.Request{InstanceID: "i", HyperscalerType: "azure"}},
		{"sap-converged-cloud", "cf-eu20", "eu-de-1", provisioning.Request{InstanceID: "i", HyperscalerType: "openstack_eu-de-1"}},
	}
	for _, tc := range tests {
		got, err := provisioning.RequestFor(rs, "i", "ga", tc.plan, tc.pr, tc.hr)
		if err != nil || got != tc.want {
			t.Errorf("%s %s %s: %+v, %v; want %+v", tc.plan, tc.pr, tc.hr, got, err, tc.want)
		}
	}
	if _, err := provisioning.RequestFor(rs, "i", "ga", "azure", "cf-eu10", "westeurope"); !errors.Is(err, provisioning.ErrNoRule) {
		t.Errorf("a plan without an entry: %v, want ErrNoRule", err)
	}
}
