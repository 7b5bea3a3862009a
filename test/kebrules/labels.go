package kebrules

import "github.com/kyma-project/hap-reconciler/internal/hap"

// KEB's labels on a CredentialsBinding (common/gardener), spelled out here
// rather than taken from the job, so that a wrong key of the job's shows as
// a difference. A pool, the pair of hyperscalerType and EU access, is a
// hap.Pool: plain data, no rule of the job's.
const (
	labelHyperscalerType = "hyperscalerType"
	labelEUAccess        = "euAccess"
	labelTenantName      = "tenantName"
	labelShared          = "shared"
	labelDirty           = "dirty"
)

// poolSelector is a pool's part of KEB's label selectors
// (NewLabelSelectorFromRuleset): its hyperscalerType and EU access.
func poolSelector(p hap.Pool) string {
	eu := "!" + labelEUAccess
	if p.EUAccess {
		eu = labelEUAccess + "=true"
	}
	return labelHyperscalerType + "=" + p.HyperscalerType + "," + eu
}

// notSharedNotDirty is what KEB asks of every binding of a pool that is
// not shared.
const notSharedNotDirty = "," + labelShared + "!=true,!" + labelDirty

// TenantSelector selects the bindings the GA holds in the pool
// (BuildForTenantMatching).
func TenantSelector(p hap.Pool, ga string) string {
	return poolSelector(p) + notSharedNotDirty + "," + labelTenantName + "=" + ga
}

// ClaimSelector selects the pool's free bindings, those KEB claims from
// (BuildForSecretBindingClaim).
func ClaimSelector(p hap.Pool) string {
	return poolSelector(p) + notSharedNotDirty + ",!" + labelTenantName
}

// SharedSelector selects a shared pool's bindings.
func SharedSelector(p hap.Pool) string {
	return poolSelector(p) + "," + labelShared + "=true"
}

// DirtySelector selects every binding KEB's free step marked dirty.
const DirtySelector = labelDirty + "=true"

// TenantOf is the GA a binding's labels give it to; "" when none.
func TenantOf(labels map[string]string) string { return labels[labelTenantName] }
