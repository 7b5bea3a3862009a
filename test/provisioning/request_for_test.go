package provisioning_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
	"github.com/kyma-project/hap-reconciler/provisioning"
)

// KEB's rules, evaluated on the provider type KEB has decided for the
// runtime, give NextBinding's request; the rules come from the job's parser
// of KEB's rule language.
func TestRequestForFollowsKEBsRules(t *testing.T) {
	rs, errs := rules.Parse([]string{"aws", "aws(PR=cf-eu11) -> EU", "gcp(PR=cf-sa30) -> PR", "trial -> S", "free",
		"sap-converged-cloud -> S, HR", "gdch -> EU", "newplan -> PR"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	runtime := func(plan, provider, pr, hr string) provisioning.Runtime {
		return provisioning.Runtime{InstanceID: "i", GlobalAccountID: "ga", Plan: plan, ProviderType: provider, PlatformRegion: pr, HyperscalerRegion: hr}
	}
	tests := []struct {
		rt   provisioning.Runtime
		want provisioning.Request
	}{
		{runtime("aws", "aws", "cf-us10", "us-east-1"), provisioning.Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "aws"}},
		{runtime("aws", "aws", "cf-eu11", "eu-central-1"), provisioning.Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "aws", EUAccess: true}},
		{runtime("gcp", "gcp", "cf-sa30", "me-central2"), provisioning.Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "gcp_cf-sa30"}},
		// Trial and free run where KEB's provider values put them, not
		// where the job's defaults would.
		{runtime("trial", "gcp", "cf-eu10", "europe-west3"), provisioning.Request{InstanceID: "i", HyperscalerType: "gcp"}},
		{runtime("trial", "azure", "cf-eu10", "westeurope"), provisioning.Request{InstanceID: "i", HyperscalerType: "azure"}},
		{runtime("free", "azure", "cf-eu20", "westeurope"), provisioning.Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "azure"}},
		{runtime("sap-converged-cloud", "openstack", "cf-eu20", "eu-de-1"), provisioning.Request{InstanceID: "i", HyperscalerType: "openstack_eu-de-1"}},
		{runtime("gdch", "gdch", "cf-eu10", "eu-1"), provisioning.Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "gdch", EUAccess: true}},
		// A plan newer than the job's plan table: the provider comes from KEB.
		{runtime("newplan", "alicloud", "cf-cn40", "cn-beijing"), provisioning.Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "alicloud_cf-cn40"}},
	}
	for _, tc := range tests {
		got, err := provisioning.RequestFor(rs, tc.rt)
		// The request names the runtime's provider: Gardener's confirmation
		// rejects a binding of another one.
		tc.want.ProviderType = tc.rt.ProviderType
		if err != nil || got != tc.want {
			t.Errorf("%+v: %+v, %v; want %+v", tc.rt, got, err, tc.want)
		}
	}
	if _, err := provisioning.RequestFor(rs, runtime("azure", "azure", "cf-eu10", "westeurope")); !errors.Is(err, provisioning.ErrNoRule) {
		t.Errorf("a plan without an entry: %v, want ErrNoRule", err)
	}
	for field, rt := range map[string]provisioning.Runtime{
		"ProviderType":    runtime("trial", "", "cf-eu10", "westeurope"),
		"InstanceID":      {GlobalAccountID: "ga", Plan: "aws", ProviderType: "aws"},
		"GlobalAccountID": {InstanceID: "i", Plan: "aws", ProviderType: "aws"},
	} {
		if _, err := provisioning.RequestFor(rs, rt); err == nil || !strings.Contains(err.Error(), "Runtime."+field) {
			t.Errorf("%s empty: %v, want an error naming the field", field, err)
		}
	}
}
