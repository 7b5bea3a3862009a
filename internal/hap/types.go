// Package hap holds the domain of the Hyperscaler Account Pool as the job sees
// it: bindings, pools, shoots and instance counts tallied per binding (Tally),
// and the pure decisions taken on them. Nothing in this package does I/O or reads the
// clock; callers pass `now`.
package hap

import "github.com/kyma-project/hap-reconciler/provisioning/schema"

// Label keys KEB and the account-cleanup process put on CredentialsBindings,
// and the label KEB puts on shoots. Those KEB's selectors read are the read
// path's own, written once there.
const (
	LabelHyperscalerType = schema.LabelHyperscalerType
	LabelEUAccess        = schema.LabelEUAccess
	LabelTenantName      = schema.LabelTenantName
	LabelShared          = schema.LabelShared
	LabelDirty           = schema.LabelDirty
	LabelInternal        = "internal"
	LabelRuntimeID       = "kyma-project.io/runtime-id"
)

// AnnotationRelease names, on a binding the job released, the intent row of
// that release. It is set in the same update as the dirty label and nobody
// else touches it, so it outlives the cleanup that removes dirty and
// tenantName: the one sure sign that a given release landed.
const AnnotationRelease = "hap-reconciler.kyma-project.io/release"

// AnnotationReleaseVoided names a release intent whose update the job made
// impossible: written guarded by the same resourceVersion as that update,
// it moves the binding past it, so the update can never land.
const AnnotationReleaseVoided = "hap-reconciler.kyma-project.io/release-voided"

// AnnotationReleaseUndone names the release an operator undid with
// `hap-reconciler undo-release`: its dirty label was removed and the
// binding kept its tenantName.
const AnnotationReleaseUndone = "hap-reconciler.kyma-project.io/release-undone"

// Pool identifies a set of interchangeable bindings, as KEB's search labels do.
type Pool struct {
	HyperscalerType string
	EUAccess        bool
}

func (p Pool) String() string {
	if p.EUAccess {
		return p.HyperscalerType + "/eu"
	}
	return p.HyperscalerType
}

// Binding is what decisions need of one CredentialsBinding.
type Binding struct {
	Name string
	// GlobalAccountID is the tenantName label: the GA that claimed the
	// binding. Empty means the binding is free, in the pool.
	GlobalAccountID string
	Pool            Pool
	// ProviderType is provider.type as Gardener holds it (aws, azure, ...).
	ProviderType string
	// Shared is shared: "true", exactly: what KEB's shared selector matches.
	Shared bool
	// Dirty is a dirty label of any value: KEB's dedicated selectors take
	// only bindings without one.
	Dirty bool
	// Internal is an internal label of any value: never released.
	Internal bool
	// OutOfPool says which label and value keep every selector of KEB's
	// from returning the binding, or "" when one returns it.
	OutOfPool string
	// ResourceVersion and Labels let an action update the binding with
	// optimistic concurrency and check that nothing changed since the snapshot.
	ResourceVersion string
	Labels          Labels
	// ReleaseID is the AnnotationRelease annotation: the intent of the
	// job's last release of the binding, "" when it never released it.
	ReleaseID string
}

// DirtyBindings names the bindings with a dirty label: the ones whose
// withdrawal from the picks must hold.
func DirtyBindings(bindings []Binding) []string {
	var out []string
	for _, b := range bindings {
		if b.Dirty {
			out = append(out, b.Name)
		}
	}
	return out
}

// Claimed reports whether a GA holds the binding.
func (b Binding) Claimed() bool { return b.GlobalAccountID != "" }

// Dedicated reports whether KEB's dedicated selectors can return the
// binding: in a pool, not shared, not dirty. Claimed, it is one of its GA's
// bindings; not claimed, it is free for the next claim.
func (b Binding) Dedicated() bool { return b.OutOfPool == "" && !b.Shared && !b.Dirty }

// Free reports whether KEB's claim selector can return the binding.
func (b Binding) Free() bool { return b.Dedicated() && !b.Claimed() }

// InSharedPool reports whether KEB's shared selector can return the binding.
func (b Binding) InSharedPool() bool { return b.OutOfPool == "" && b.Shared }

// Shoot is what decisions need of one Shoot.
type Shoot struct {
	Name string
	// BindingName is spec.credentialsBindingName, else spec.secretBindingName;
	// empty when the shoot names neither.
	BindingName string
	// ViaSecretBinding: BindingName came from spec.secretBindingName. KEB's
	// shared-pool pick counts spec.credentialsBindingName only.
	ViaSecretBinding bool
	Deleting         bool
	RuntimeID        string
}

// NoOwner is the owner of instances KEB counts for no global account: its
// GetInstanceCountPerBinding drops a row whose
// subscription_global_account_id is NULL. No GA's own count includes them;
// their binding still holds them.
const NoOwner = ""

// InstanceCount is one row of the aggregate over KEB's instances table: the
// active instances of one owning GA in one binding.
type InstanceCount struct {
	// BindingName is subscription_secret_name; empty means "not yet assigned".
	BindingName string
	// GlobalAccountID is the owning GA: subscription_global_account_id when
	// set, else global_account_id; NoOwner when KEB counts the instances for
	// no GA (subscription_global_account_id NULL).
	GlobalAccountID string
	Active          int
	// RuntimeIDs of those active instances, to attribute shoots to GAs.
	RuntimeIDs RuntimeIDs
}

// Skipped records an object the gather step could not use, with the reason.
// Skipped objects never stop a run and are never acted upon.
type Skipped struct {
	Kind   string // "CredentialsBinding" or "Shoot"
	Name   string
	Reason string
}

// Snapshot is a landscape held whole, the way tests and the demo state one
// (NewTally). A run never holds one: it counts shoots per binding while
// they are listed (ShootCounter) and keeps only the counts.
type Snapshot struct {
	Bindings  []Binding
	Shoots    []Shoot
	Instances []InstanceCount
}
