package hap

import "strings"

// NoLimit is the limit KEB applies when no limit is configured at all
// (common/hyperscaler/multiaccount/config.go, LimitForProvider: a default of
// 0 means no limit, written as 999999).
const NoLimit = 999999

// Policy is the part of KEB's configuration that decisions follow: which GAs
// may own several bindings per pool, how many clusters one binding holds
// before provisioning moves on to the next, and the guard that stops
// provisioning for a GA whose bindings all look empty. It holds the values
// KEB applies, which the config package works out from KEB's values or
// environment.
type Policy struct {
	// AllowAll is set when "*" is anywhere in allowedGlobalAccounts.
	AllowAll bool
	// Allowed holds the listed GAs. Empty with AllowAll false means the
	// feature is off.
	Allowed map[string]bool
	// DefaultLimit applies to a provider without a limit of its own, or whose
	// limit is 0. A DefaultLimit of 0 means no limit (NoLimit).
	DefaultLimit int
	// ProviderLimits is keyed by KEB's provider names (see KEBProvider):
	// aws, gcp, azure, openstack, alicloud. KEB has no other limit fields.
	ProviderLimits map[string]int
	// MinBindingsForGuard: when above 0, a GA holding at least this many
	// bindings in a pool, none with an active instance of its own, gets no
	// binding at all (KEB fails the provisioning). 0 turns the guard off.
	MinBindingsForGuard int
}

// MultiAccount reports whether the GA may own several bindings per pool, and
// so whether limits apply to its bindings (KEB's IsGlobalAccountAllowed).
func (p Policy) MultiAccount(ga string) bool {
	return ga != "" && (p.AllowAll || p.Allowed[ga])
}

// LimitForProvider is KEB's LimitForProvider: the provider's limit; 0, or a
// provider KEB has no limit field for (gdch, ...), falls back to the default;
// a default of 0 means NoLimit.
func (p Policy) LimitForProvider(provider string) int {
	limit := 0
	if name := KEBProvider(provider); name != "" {
		limit = p.ProviderLimits[name]
	}
	if limit == 0 {
		limit = p.DefaultLimit
	}
	if limit == 0 {
		return NoLimit
	}
	return limit
}

// LimitFor returns the cluster limit of a binding: KEB applies the limit of
// the runtime's provider, which for a binding of a pool is its provider.type,
// else the provider part of its hyperscalerType.
func (p Policy) LimitFor(b Binding) int {
	provider := b.ProviderType
	if provider == "" {
		provider = providerOfHyperscalerType(b.Pool.HyperscalerType)
	}
	return p.LimitForProvider(provider)
}

// limitOf returns the binding's limit when its GA is subject to one.
func (p Policy) limitOf(b Binding) (int, bool) {
	if b.Shared || !p.MultiAccount(b.GlobalAccountID) {
		return 0, false
	}
	return p.LimitFor(b), true
}

// providerOfHyperscalerType returns the provider part of a hyperscalerType
// label: "aws_cf-eu11" -> "aws", "openstack_eu-de-1" -> "openstack".
func providerOfHyperscalerType(hyperscalerType string) string {
	provider, _, _ := strings.Cut(hyperscalerType, "_")
	return provider
}

// The providers KEB has a limit field for, by the names KEB's limits use.
const (
	ProviderAWS       = "aws"
	ProviderAzure     = "azure"
	ProviderGCP       = "gcp"
	ProviderOpenStack = "openstack"
	ProviderAliCloud  = "alicloud"
)

// KEB's provider names for limits, as KEB's CloudProviderFromString
// (common/runtime) folds them: case-insensitive, and three spellings of SAP
// Converged Cloud. Nothing else is recognised: another name gets the default.
var kebProviders = map[string]string{
	ProviderAWS:           ProviderAWS,
	ProviderAzure:         ProviderAzure,
	ProviderGCP:           ProviderGCP,
	ProviderOpenStack:     ProviderOpenStack,
	"sapconvergedcloud":   ProviderOpenStack,
	"sap-converged-cloud": ProviderOpenStack,
	ProviderAliCloud:      ProviderAliCloud,
}

// KEBProvider returns the limit field KEB uses for a provider name, or ""
// when KEB has none for it (it then applies the default).
func KEBProvider(name string) string {
	return kebProviders[strings.ToLower(name)]
}

// LimitProviders are the providers KEB has a limit field for, in the order
// KEB declares them.
var LimitProviders = []string{ProviderAWS, ProviderGCP, ProviderAzure, ProviderOpenStack, ProviderAliCloud}
