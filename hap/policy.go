package hap

import "strings"

// Policy is the part of KEB's configuration that decisions follow: which GAs
// may own several bindings per pool, and how many clusters one binding holds
// before provisioning moves on to the next.
type Policy struct {
	// AllowAll is the allowlist ["*"].
	AllowAll bool
	// Allowed holds the listed GAs when AllowAll is false. Empty with
	// AllowAll false means the feature is off.
	Allowed map[string]bool
	// DefaultLimit applies to providers without an override.
	DefaultLimit int
	// ProviderLimits is keyed by canonical provider name (see CanonicalProvider).
	ProviderLimits map[string]int
}

// MultiAccount reports whether the GA may own several bindings per pool, and
// so whether limits apply to its bindings.
func (p Policy) MultiAccount(ga string) bool {
	return ga != "" && (p.AllowAll || p.Allowed[ga])
}

// LimitFor returns the cluster limit of a binding: the override of its
// provider (provider.type, else the provider part of hyperscalerType), else
// the default.
func (p Policy) LimitFor(b Binding) int {
	provider := CanonicalProvider(b.ProviderType)
	if provider == "" {
		provider = CanonicalProvider(ProviderOfHyperscalerType(b.Pool.HyperscalerType))
	}
	if l, ok := p.ProviderLimits[provider]; ok {
		return l
	}
	return p.DefaultLimit
}

// limitOf returns the binding's limit when its GA is subject to one.
func (p Policy) limitOf(b Binding) (int, bool) {
	if b.Shared || !p.MultiAccount(b.GlobalAccountID) {
		return 0, false
	}
	return p.LimitFor(b), true
}

// ProviderOfHyperscalerType returns the provider part of a hyperscalerType
// label: "aws_cf-eu11" -> "aws", "openstack_eu-de-1" -> "openstack".
func ProviderOfHyperscalerType(hyperscalerType string) string {
	provider, _, _ := strings.Cut(hyperscalerType, "_")
	return provider
}

// providerAliases maps the names KEB, its plans and Gardener use for one
// provider onto the name Gardener's provider.type uses.
var providerAliases = map[string]string{
	"aws":                 "aws",
	"amazon":              "aws",
	"azure":               "azure",
	"gcp":                 "gcp",
	"google":              "gcp",
	"openstack":           "openstack",
	"sap-converged-cloud": "openstack",
	"sapconvergedcloud":   "openstack",
	"sap_converged_cloud": "openstack",
	"alicloud":            "alicloud",
	"alibaba":             "alicloud",
	"alibabacloud":        "alicloud",
}

// CanonicalProvider folds the spellings KEB writes ("AWS", "Azure",
// "SapConvergedCloud", "sap-converged-cloud", ...) into Gardener's provider
// type names. Unknown providers are returned lower-cased, so a new provider
// still gets the default limit, and an override written for it still applies.
func CanonicalProvider(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if c, ok := providerAliases[n]; ok {
		return c
	}
	return n
}
