package kebrules

import "strings"

// Config is KEB's multi-account configuration as KEB holds it
// (multiaccount.MultiAccountConfig). It is also the
// provisioning.MultiAccountConfig that AccountFor reads.
type Config struct {
	// Allowed is AllowedGlobalAccounts; "*" allows every GA.
	Allowed []string
	// Limits holds "default" and KEB's provider fields: "aws", "gcp",
	// "azure", "openstack" and "alicloud"; a missing one is 0.
	Limits              map[string]int
	MinBindingsForGuard int
}

// IsGlobalAccountAllowed is KEB's IsGlobalAccountAllowed: an empty
// allowlist turns the feature off.
func (c Config) IsGlobalAccountAllowed(ga string) bool {
	for _, a := range c.Allowed {
		if a == "*" || a == ga {
			return true
		}
	}
	return false
}

// noLimit is what LimitForProvider answers when no limit is set.
const noLimit = 999999

// LimitForProvider is KEB's LimitForProvider: the provider's field as
// CloudProviderFromString (common/runtime/model.go) names it, the default
// when that is 0 or the provider has no field, and no limit when both are 0.
func (c Config) LimitForProvider(provider string) int {
	field := map[string]string{"aws": "aws", "gcp": "gcp", "azure": "azure", "openstack": "openstack",
		"sapconvergedcloud": "openstack", "sap-converged-cloud": "openstack", "alicloud": "alicloud"}[strings.ToLower(provider)]
	limit := 0
	if field != "" {
		limit = c.Limits[field]
	}
	if limit == 0 {
		limit = c.Limits["default"]
	}
	if limit == 0 {
		return noLimit
	}
	return limit
}

// providerOf is the provider of a pool's hyperscalerType, whose first part
// it is (aws, gcp, azure, openstack_<region>, alicloud).
func providerOf(hyperscalerType string) string {
	return strings.SplitN(hyperscalerType, "_", 2)[0]
}
