package kebrules

// KEB's labels on a CredentialsBinding (common/gardener), spelled out here
// rather than taken from the job.
const (
	LabelHyperscalerType = "hyperscalerType"
	LabelEUAccess        = "euAccess"
	LabelTenantName      = "tenantName"
	LabelShared          = "shared"
	LabelDirty           = "dirty"
	LabelInternal        = "internal"
)

// Pool is what KEB's rules name: the hyperscalerType and EU access.
type Pool struct {
	HyperscalerType string
	EU              bool
}

func (p Pool) String() string {
	if p.EU {
		return p.HyperscalerType + "(eu)"
	}
	return p.HyperscalerType
}

// selector is the pool's part of KEB's label selectors
// (NewLabelSelectorFromRuleset).
func (p Pool) selector() string {
	eu := "!" + LabelEUAccess
	if p.EU {
		eu = LabelEUAccess + "=true"
	}
	return LabelHyperscalerType + "=" + p.HyperscalerType + "," + eu
}

// notSharedNotDirty is what KEB asks of every binding of a pool that is
// not shared.
const notSharedNotDirty = "," + LabelShared + "!=true,!" + LabelDirty

// TenantSelector selects the bindings the GA holds in the pool
// (BuildForTenantMatching).
func (p Pool) TenantSelector(ga string) string {
	return p.selector() + notSharedNotDirty + "," + LabelTenantName + "=" + ga
}

// ClaimSelector selects the pool's free bindings, those KEB claims from
// (BuildForSecretBindingClaim).
func (p Pool) ClaimSelector() string {
	return p.selector() + notSharedNotDirty + ",!" + LabelTenantName
}

// SharedSelector selects a shared pool's bindings.
func (p Pool) SharedSelector() string {
	return p.selector() + "," + LabelShared + "=true"
}

// DirtySelector selects every binding KEB's free step marked dirty.
const DirtySelector = LabelDirty + "=true"
