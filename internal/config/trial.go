package config

import (
	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
)

// trialProviderEnvName is the field KEB reads its default trial provider
// into, as envconfig names it under the prefix APP (cmd/broker's Config,
// InfrastructureManager.DefaultTrialProvider of broker.InfrastructureManager;
// KEB's chart sets APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER).
const trialProviderEnvName = kebPrefix + ".InfrastructureManager.DefaultTrialProvider"

// TrialProviderEnv is the variable KEB's chart sets for it.
var TrialProviderEnv = envName(trialProviderEnvName)

// applyTrialProvider takes KEB's default trial provider from KEB's variable
// when set (else KEB's default, Azure). A value KEB's trial switch does not
// have (it compares "AWS", "GCP", "Azure" exactly) is a warning: KEB then
// fails every trial request naming no provider, and the job gives such a
// runtime no pool either.
func applyTrialProvider(cfg *Config, keb kebConfig) {
	variable, _ := lookupEnvconfig(trialProviderEnvName)
	if variable == "" {
		return
	}
	value := keb.InfrastructureManager.DefaultTrialProvider
	provider, ok := rules.TrialProviderOfKEB(value)
	if !ok {
		cfg.Warnings = append(cfg.Warnings, Warning{Key: variable, Value: quote(value),
			Reason: "is not a trial provider KEB has (AWS, GCP or Azure, spelled so: KEB's ValuesForPlanAndParameters compares exactly); " +
				"KEB fails every trial provisioning whose request names no provider, and the job gives such a runtime no pool"})
	}
	cfg.Providers.Trial = provider
}
