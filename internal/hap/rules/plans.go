package rules

import "sort"

// Provider types: the base of a hyperscalerType, as KEB's provider values name
// them (ProviderType in internal/provider/*.go).
const (
	ProviderAWS       = "aws"
	ProviderAzure     = "azure"
	ProviderGCP       = "gcp"
	ProviderOpenStack = "openstack"
	ProviderAlicloud  = "alicloud"
)

// Plans that take their provider from the request rather than from the plan.
const (
	planTrial = "trial"
	planFree  = "free"
)

// fixedProviders maps each plan with one provider to it, as KEB's
// ValuesForPlanAndParameters (internal/provider/provider_values.go) picks the
// provider values for the plan. Together with trial and free these are all the
// plans in KEB's PlanIDsMapping (internal/broker/plans.go).
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
}

// requestProviders lists, for the plans whose request picks the provider, every
// provider KEB accepts there: a trial request may name AWS, GCP or Azure; a free
// runtime runs on its platform's provider, AWS or Azure (the two switches in
// ValuesForPlanAndParameters; any other value fails the provisioning).
var requestProviders = map[string][]string{
	planTrial: {ProviderAWS, ProviderAzure, ProviderGCP},
	planFree:  {ProviderAWS, ProviderAzure},
}

// Providers holds the provider of the plans whose provider KEB's configuration
// or the request decides. Values are provider types ("aws", "azure", "gcp").
type Providers struct {
	// Trial is the provider of a trial runtime whose request names none: KEB's
	// APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER, Azure by default
	// (broker.InfrastructureManager.DefaultTrialProvider).
	Trial string
	// Free is the provider of a free runtime. KEB takes it from the platform
	// the request comes from; the default is the one provider KEB offers the
	// free plan on by default (FreemiumProviders, default "aws", in
	// cmd/broker's configuration).
	Free string
}

// DefaultProviders returns KEB's defaults: trial on Azure, free on AWS.
func DefaultProviders() Providers {
	return Providers{Trial: ProviderAzure, Free: ProviderAWS}
}

// ProviderType returns the provider type a runtime of the plan runs on, the
// base of its hyperscalerType, or false for a plan KEB does not have.
func (p Providers) ProviderType(plan string) (string, bool) {
	switch plan {
	case planTrial:
		return p.Trial, p.Trial != ""
	case planFree:
		return p.Free, p.Free != ""
	}
	provider, ok := fixedProviders[plan]
	return provider, ok
}

// possibleProviders returns every provider a runtime of the plan can run on.
func possibleProviders(plan string) []string {
	if providers, ok := requestProviders[plan]; ok {
		return providers
	}
	if provider, ok := fixedProviders[plan]; ok {
		return []string{provider}
	}
	return nil
}

// KnownPlan reports whether KEB has a plan of that name; KEB refuses an entry
// for any other plan (checkPlans in ruleset.go, against PlanIDsMapping).
// Names are compared exactly: "AWS" is not "aws".
func KnownPlan(plan string) bool {
	return possibleProviders(plan) != nil
}

// Plans returns KEB's plan names, sorted.
func Plans() []string {
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
