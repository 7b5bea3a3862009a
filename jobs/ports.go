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
	// whose labels cannot be read. When the list had to start over (expired
	// continue token), onReset is called first and every binding is
	// delivered again from the beginning.
	ListBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) error
	// ListShoots calls fn for every shoot, with onReset as for ListBindings.
	ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error
	// ListShootsLive is ListShoots asked of the API server itself, even where
	// ListShoots answers from a watch cache: the release's last look before
	// it acts must not trail a shoot created a moment ago.
	ListShootsLive(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error
	// GetBinding reads one binding; when it does not exist, the error is
	// one for which IsNotFound is true.
	GetBinding(ctx context.Context, name string) (hap.Binding, error)
	// UpdateBindingLabels replaces the labels if the binding still has
	// resourceVersion; otherwise it fails with an error for which
	// IsConflict is true.
	UpdateBindingLabels(ctx context.Context, name, resourceVersion string, labels map[string]string) error
	IsConflict(err error) bool
	IsNotFound(err error) bool
}

// Store is what the jobs need of PostgreSQL: KEB's instances, read only, and
// the job's own tables.
type Store interface {
	ReadInstanceCounts(ctx context.Context) (hap.InstanceRead, error)
	RecordFindings(ctx context.Context, findings []hap.Finding, now time.Time) (opened, resolved int, err error)
	OpenFindings(ctx context.Context, ga string) ([]hap.OpenFinding, error)
	ReplaceCandidates(ctx context.Context, rows []hap.Candidate, absorbed []string, computedAt time.Time, reservationTTL time.Duration) error
	EmptySince(ctx context.Context) (map[string]hap.EmptySighting, error)
	SaveEmptySince(ctx context.Context, sightings map[string]hap.EmptySighting) error
	// RetireCandidate withdraws the binding from the picks provisioning makes
	// unless an active instance or a reservation uses it, and returns that
	// use. It holds the candidate row's lock while counting, so no pick can
	// slip in between.
	RetireCandidate(ctx context.Context, binding string) (inUse int, err error)
	// InUse counts the active instances and reservations on the binding,
	// changing nothing: the dry-run twin of RetireCandidate.
	InUse(ctx context.Context, binding string) (int, error)
	RecordRelease(ctx context.Context, r hap.ReleaseRecord) error
	// OpenReleaseIntents returns the newest release intent of each binding
	// that no later audit row settles (see release_audit.go).
	OpenReleaseIntents(ctx context.Context) ([]hap.ReleaseRecord, error)
	// RecordPoolSamples appends the free and claimed bindings of every
	// dedicated pool and prunes what is older than retention.
	RecordPoolSamples(ctx context.Context, at time.Time, stats []hap.PoolStats, retention time.Duration) error
	// PoolHistory returns the samples recorded since, per pool.
	PoolHistory(ctx context.Context, since time.Time) (map[hap.Pool][]hap.PoolSample, error)
}
