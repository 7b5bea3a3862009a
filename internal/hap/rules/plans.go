package rules

import (
	"sort"
)

// PlanTableSource names the KEB source the plan table below was taken from:
// kyma-project/kyma-environment-broker at this commit (its HEAD when the table
// was last compared; gdch came in with bb0a95c7d, "Add GDCH provider and
// plan", 2026-06-24). A plan KEB added later is unknown here: its entries
// are accepted with a warning that names this commit.
const PlanTableSource = "kyma-project/kyma-environment-broker@bf89c5d51824f5fc05821341896576ce47f9ccff"

// Provider types: the base of a hyperscalerType, as KEB's provider values name
// them (the *ProviderType constants of internal/provider/model.go).
const (
	ProviderAWS       = "aws"
	ProviderAzure     = "azure"
	ProviderGCP       = "gcp"
	ProviderOpenStack = "openstack"
	ProviderAlicloud  = "alicloud"
	ProviderGDCH      = "gdch"
)

// Plans that take their provider from the request rather than from the plan.
const (
	planTrial = "trial"
	planFree  = "free"
)

// fixedProviders maps each plan with one provider to it, as KEB's
// ValuesForPlanAndParameters (internal/provider/provider_values.go) picks the
// provider values for the plan. Together with trial and free these are all the
// plans in KEB's PlanIDsMapping (internal/broker/plans.go) at PlanTableSource.
var fixedProviders = map[string]string{
	"aws":                    ProviderAWS,
	"build-runtime-aws":      ProviderAWS,
	"preview":                ProviderAWS,
	"azure":                  ProviderAzure,
	"build-runtime-azure":    ProviderAzure,
	"azure_lite":             ProviderAzure,
	"gcp":                    ProviderGCP,
	"build-runtime-gcp":      ProviderGCP,
	"sap-converged-cloud":    ProviderOpenStack,
	"alicloud":               ProviderAlicloud,
	"build-runtime-alicloud": ProviderAlicloud,
	"gdch":                   ProviderGDCH,
}

// requestProviders lists, for the plans whose request picks the provider, every
// provider KEB accepts there: a trial request may name AWS, GCP or Azure; a free
// runtime runs on its platform's provider, AWS or Azure (the two switches in
// ValuesForPlanAndParameters; any other value fails the provisioning).
var requestProviders = map[string][]string{
	planTrial: {ProviderAWS, ProviderAzure, ProviderGCP},
	planFree:  {ProviderAWS, ProviderAzure},
}

// possibleProviders returns every provider a runtime of the plan can run on;
// nil for a plan the table does not have.
func possibleProviders(plan string) []string {
	if providers, ok := requestProviders[plan]; ok {
		return providers
	}
	if provider, ok := fixedProviders[plan]; ok {
		return []string{provider}
	}
	return nil
}

// knownPlan reports whether the plan table has a plan of that name. Names are
// compared exactly: "AWS" is not "aws".
func knownPlan(plan string) bool {
	return possibleProviders(plan) != nil
}

// plans returns the plan names of the table, sorted.
func plans() []string {
	names := make([]string, 0, len(fixedProviders)+len(requestProviders))
	for name := range fixedProviders {
		names = append(names, name)
	}
	for name := range requestProviders {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
