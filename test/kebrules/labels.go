package kebrules

import "github.com/kyma-project/hap-reconciler/internal/hap"

// KEB's labels on a CredentialsBinding (common/gardener), spelled out here
// rather than taken from the job. A pool, the pair of hyperscalerType and EU
// access, is a hap.Pool: plain data, no rule of the job's.
const (
	LabelHyperscalerType = "hyperscalerType"
	LabelEUAccess        = "euAccess"
	LabelTenantName      = "tenantName"
	LabelShared          = "shared"
	LabelDirty           = "dirty"
	LabelInternal        = "internal"
)

// poolSelector is a pool's part of KEB's label selectors
// (NewLabelSelectorFromRuleset): its hyperscalerType and EU access.
func poolSelector(p hap.Pool) string {
	eu := "!" + LabelEUAccess
	if p.EUAccess {
		eu = LabelEUAccess + "=true"
	}
	return LabelHyperscalerType + "=" + p.HyperscalerType + "," + eu
}

// notSharedNotDirty is what KEB asks of every binding of a pool that is
// not shared.
const notSharedNotDirty = "," + LabelShared + "!=true,!" + LabelDirty

// TenantSelector selects the bindings the GA holds in the pool
// (BuildForTenantMatching).
func TenantSelector(p hap.Pool, ga string) string {
	return poolSelector(p) + notSharedNotDirty + "," + LabelTenantName + "=" + ga
}

// ClaimSelector selects the pool's free bindings, those KEB claims from
// (BuildForSecretBindingClaim).
func ClaimSelector(p hap.Pool) string {
	return poolSelector(p) + notSharedNotDirty + ",!" + LabelTenantName
}

// SharedSelector selects a shared pool's bindings.
func SharedSelector(p hap.Pool) string {
	return poolSelector(p) + "," + LabelShared + "=true"
}

// DirtySelector selects every binding KEB's free step marked dirty.
const DirtySelector = LabelDirty + "=true"
