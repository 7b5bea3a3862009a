package jobs

import (
	"context"
	"time"

	"github.com/kyma-project/hap-reconciler/hap"
)

// Gardener is what the jobs need of the Gardener API. Lists page through the
// namespace and fail rather than return a partial picture.
type Gardener interface {
	// ListBindings calls fn for every binding; skipped receives bindings
	// whose labels cannot be read.
	ListBindings(ctx context.Context, fn func(hap.Binding) error, skipped func(hap.Skipped)) error
	// ListShoots calls fn for every shoot. When the list had to restart
	// (expired continue token), reset is called first and every shoot is
	// delivered again from the beginning.
	ListShoots(ctx context.Context, reset func(), fn func(hap.Shoot) error) error
	GetBinding(ctx context.Context, name string) (hap.Binding, error)
	// UpdateBindingLabels replaces the labels if the binding still has
	// resourceVersion; otherwise it fails with an error for which
	// IsConflict is true.
	UpdateBindingLabels(ctx context.Context, name, resourceVersion string, labels map[string]string) error
	IsConflict(err error) bool
}

// InstanceRead is one consistent read of KEB's database.
type InstanceRead struct {
	Counts []hap.InstanceCount
	// Absorbed are reservations whose instance the counts already include.
	Absorbed []string
	TakenAt  time.Time
}

// OpenFinding is a drift finding as stored, with when it was first seen.
type OpenFinding struct {
	hap.Finding
	FirstSeen time.Time
}

// ReleaseRecord is one line of the release audit.
type ReleaseRecord struct {
	Binding hap.Binding
	Mode    string
	Reason  string
	DryRun  bool
	Outcome string
	At      time.Time
}

// Store is what the jobs need of PostgreSQL: KEB's instances, read only, and
// the job's own tables.
type Store interface {
	ReadInstances(ctx context.Context) (InstanceRead, error)
	RecordFindings(ctx context.Context, findings []hap.Finding, now time.Time) ([]OpenFinding, error)
	ReplaceCandidates(ctx context.Context, rows []hap.Candidate, absorbed []string, now time.Time, reservationTTL time.Duration) error
	EmptySightings(ctx context.Context) (map[string]hap.EmptySighting, error)
	SaveEmptySightings(ctx context.Context, s map[string]hap.EmptySighting) error
	// RetireCandidate withdraws the binding from the candidate table unless
	// an active instance or a reservation uses it, and returns that use. It
	// holds the candidate row's lock while counting, so no pick can slip in.
	RetireCandidate(ctx context.Context, binding string) (inUse int, err error)
	// InUse counts the active instances and reservations on the binding,
	// changing nothing: the dry-run twin of RetireCandidate.
	InUse(ctx context.Context, binding string) (int, error)
	RecordRelease(ctx context.Context, r ReleaseRecord) error
}
