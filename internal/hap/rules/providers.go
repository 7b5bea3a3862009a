package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Providers holds what KEB's configuration decides about a runtime's
// provider: the provider of a trial request that names none.
type Providers struct {
	// Trial is the provider type of KEB's default trial provider
	// (APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER, "Azure" by
	// default: broker.InfrastructureManager.DefaultTrialProvider). "" when
	// KEB's value is none its trial switch has, so that KEB fails every
	// trial request naming no provider.
	Trial string
}

// DefaultProviders returns KEB's defaults: trial on Azure.
func DefaultProviders() Providers {
	return Providers{Trial: ProviderAzure}
}

// cloudProviders maps KEB's CloudProvider values (common/runtime/model.go),
// as a trial request's provider parameter and KEB's default trial provider
// spell them, to provider types.
var cloudProviders = map[string]string{
	"AWS":               ProviderAWS,
	"Azure":             ProviderAzure,
	"GCP":               ProviderGCP,
	"SapConvergedCloud": ProviderOpenStack,
	"Alicloud":          ProviderAlicloud,
	"GDCH":              ProviderGDCH,
}

// TrialProviderOfKEB reads KEB's default trial provider as KEB's trial
// switch does (ValuesForPlanAndParameters compares the CloudProvider
// exactly): "AWS", "GCP" or "Azure". Any other value, "aws" included, is
// false: KEB then fails every trial request that names no provider.
func TrialProviderOfKEB(value string) (string, bool) {
	provider, ok := cloudProviders[value]
	if !ok || !slices.Contains(requestProviders[planTrial], provider) {
		return "", false
	}
	return provider, true
}

// parseProvider reads a provider as an operator types it: a provider type
// (aws, azure, gcp, openstack, alicloud, gdch) or KEB's CloudProvider name
// (AWS, Azure, GCP, SapConvergedCloud, Alicloud, GDCH), in any case.
func parseProvider(value string) (string, bool) {
	for name, provider := range cloudProviders {
		if strings.EqualFold(value, name) || strings.EqualFold(value, provider) {
			return provider, true
		}
	}
	return "", false
}

// platformRegionDigit finds what KEB's platformProvider reads of a platform
// region: its first digit, wherever it stands.
var platformRegionDigit = regexp.MustCompile("[0-9]")

// platformProvider returns the provider of a platform region as KEB's
// platformProvider (internal/middleware/provider.go) derives it from the
// region's first digit: 0 SapConvergedCloud, 1 AWS, 2 Azure, 3 GCP,
// 4 Alicloud; false for a region without one of these digits (KEB's
// UnknownProvider).
func platformProvider(platformRegion string) (string, bool) {
	switch platformRegionDigit.FindString(platformRegion) {
	case "0":
		return ProviderOpenStack, true
	case "1":
		return ProviderAWS, true
	case "2":
		return ProviderAzure, true
	case "3":
		return ProviderGCP, true
	case "4":
		return ProviderAlicloud, true
	}
	return "", false
}

// Where a runtime's provider came from (ProviderError.Input).
const (
	FromRequest        = "provider"
	FromPlatformRegion = "platform region"
	FromTrialDefault   = "default trial provider"
	// FromPlan: the plan itself is unknown, and no provider was named.
	FromPlan = "plan"
)

// ProviderError says why KEB gives a runtime of the plan no provider, or not
// the one asked for.
type ProviderError struct {
	Plan string
	// Input is where the refused value came from: FromRequest,
	// FromPlatformRegion or FromTrialDefault.
	Input  string
	Value  string
	Reason string
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("plan %q, %s %q: %s", e.Plan, e.Input, e.Value, e.Reason)
}

// ProviderType returns the provider type KEB's provider values give a runtime
// of the plan (ValuesForPlanAndParameters in internal/provider/
// provider_values.go), the base of its hyperscalerType. requested is the
// provider the caller names ("" for none):
//   - a plan with one provider runs on it; a requested provider must agree;
//   - trial takes the requested provider, else the default trial provider,
//     and KEB has trial on aws, azure and gcp only;
//   - free takes the requested provider, else the platform region's
//     (platformProvider), and KEB has free on aws and azure only;
//   - a plan the table does not have (a newer KEB's) takes the requested
//     provider, which must then be given.
func (p Providers) ProviderType(plan, requested, platformRegion string) (string, error) {
	refuse := func(input, value, format string, args ...any) (string, error) {
		return "", &ProviderError{Plan: plan, Input: input, Value: value, Reason: fmt.Sprintf(format, args...)}
	}
	provider := ""
	if requested != "" {
		var ok bool
		if provider, ok = parseProvider(requested); !ok {
			return refuse(FromRequest, requested, "is no provider KEB has (aws, azure, gcp, openstack, alicloud, gdch)")
		}
	}
	if fixed, ok := fixedProviders[plan]; ok {
		if provider != "" && provider != fixed {
			return refuse(FromRequest, requested, "disagrees with the plan, which always runs on %s", fixed)
		}
		return fixed, nil
	}
	accepted, ok := requestProviders[plan]
	switch {
	case !ok && provider == "":
		return refuse(FromPlan, plan, "is not in the job's plan table (KEB's PlanIDsMapping at %s): check its spelling; "+
			"a plan newer than the job takes the runtime's provider from --provider", PlanTableSource)
	case !ok:
		return provider, nil
	case provider != "":
		if !slices.Contains(accepted, provider) {
			return refuse(FromRequest, requested, "KEB runs %s runtimes on %s only", plan, strings.Join(accepted, ", "))
		}
		return provider, nil
	case plan == planTrial:
		if p.Trial == "" {
			return refuse(FromTrialDefault, "", "KEB's default trial provider (APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER) is none of AWS, Azure, GCP, so KEB fails a trial request naming no provider; name one")
		}
		return p.Trial, nil
	}
	provider, ok = platformProvider(platformRegion)
	if !ok {
		return refuse(FromPlatformRegion, platformRegion, "has no provider digit (KEB's platformProvider reads the first digit: 0 openstack, 1 aws, 2 azure, 3 gcp, 4 alicloud), so KEB fails a free runtime there")
	}
	if !slices.Contains(accepted, provider) {
		return refuse(FromPlatformRegion, platformRegion, "is a %s platform region (KEB's platformProvider), and KEB runs free runtimes on %s only", provider, strings.Join(accepted, ", "))
	}
	return provider, nil
}
