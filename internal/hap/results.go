package hap

import "time"

// FindingKind names one kind of disagreement between KEB's database and
// Gardener, or between a binding's labels and its use.
type FindingKind string

const (
	// KindCountMismatch: the active instances in KEB's database and the shoots
	// in Gardener that reference the binding differ in number.
	KindCountMismatch FindingKind = "count_mismatch"
	// KindShootOnMissingBinding: a shoot references a binding Gardener lacks.
	KindShootOnMissingBinding FindingKind = "shoot_on_missing_binding"
	// KindInstanceOnMissingBinding: an active instance references a binding
	// Gardener lacks.
	KindInstanceOnMissingBinding FindingKind = "instance_on_missing_binding"
	// KindFreeBindingInUse: a shoot or an active instance references a binding
	// no GA has claimed.
	KindFreeBindingInUse FindingKind = "free_binding_in_use"
	// KindDirtyBindingInUse: a shoot or an active instance references a binding
	// that was released for cleanup.
	KindDirtyBindingInUse FindingKind = "dirty_binding_in_use"
	// KindCrossTenant: a binding claimed by one GA holds clusters of another.
	KindCrossTenant FindingKind = "cross_tenant"
	// KindOverLimit: a binding holds more clusters than its provider limit.
	KindOverLimit FindingKind = "over_limit"
	// KindInNoPool: the binding's labels keep every selector of KEB's from
	// returning it (Binding.OutOfPool names the label and value).
	KindInNoPool FindingKind = "in_no_pool"
	// KindRankOneDeviation: the job's rank 1 for a GA and pool differs from
	// KEB's own database-only choice (see RankOneDeviations).
	KindRankOneDeviation FindingKind = "rank_one_deviation"
	// KindProvisioningGuarded: KEB's guard (minBindingsForGuard) stops every
	// provisioning of the GA in the pool.
	KindProvisioningGuarded FindingKind = "provisioning_guarded"
	// KindPoolNotInRules: the binding is in a pool no entry of hap.rule
	// sends runtimes to.
	KindPoolNotInRules FindingKind = "pool_not_in_rules"
)

// Finding is one drift finding. Within a run it is identified by
// (BindingName, Kind, GlobalAccountID); a later run that no longer produces
// it resolves it.
type Finding struct {
	BindingName string
	// GlobalAccountID is the GA the finding is about: the binding's tenant,
	// or for cross-tenant findings the foreign GA.
	GlobalAccountID string
	Pool            Pool
	Kind            FindingKind
	DBCount         int
	ShootCount      int
	// DeletingShoots of ShootCount are being deleted: present, but on their way out.
	DeletingShoots int
	Detail         string
}

// Candidate is one row of the candidate table provisioning reads.
type Candidate struct {
	// GlobalAccountID is empty for rows of a shared pool.
	GlobalAccountID string
	Pool            Pool
	BindingName     string
	DBCount         int
	ShootCount      int
	// DBCount is, for a GA's row, the active instances that GA owns on the
	// binding (what KEB counts); for a shared row, every active instance.
	//
	// EffectiveCount is what a pick checks against the limit: for a GA's
	// row max(DBCount, ShootCount) (a GA's rows rank by DBCount, KEB's
	// measure); for a shared row the shoots naming the binding in
	// spec.credentialsBindingName, KEB's measure there, which also ranks.
	EffectiveCount int
	// Limit is nil when the GA is not allowed several bindings (no limit).
	Limit *int
	// Headroom = Limit - EffectiveCount, nil without a limit.
	Headroom   *int
	Selectable bool
	// Guarded: KEB's guard stops provisioning for this GA and pool; no row
	// of the group may be picked, and no new binding claimed.
	Guarded bool
	// Rank orders the rows of one (GA, pool); rank 1 is the binding the next
	// provisioning uses.
	Rank int
}

// ReleaseDecision says one binding may be given back to the pool.
type ReleaseDecision struct {
	Binding    Binding
	EmptySince time.Time
	Reason     string
}
