package jobs

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/hap"
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
	// MarkReleased adds dirty: "true" and the release annotation naming
	// releaseID (hap.AnnotationRelease) in one write, if the binding still
	// has resourceVersion; otherwise it fails with an error for which
	// IsConflict is true.
	MarkReleased(ctx context.Context, name, resourceVersion, releaseID string) error
	// VoidRelease sets the voided-release annotation naming releaseID, if
	// the binding is still at resourceVersion (else IsConflict): the
	// release's own update, guarded by the same version, can then never
	// land.
	VoidRelease(ctx context.Context, name, resourceVersion, releaseID string) error
	IsConflict(err error) bool
	IsNotFound(err error) bool
	// IsRefused reports whether a write's error is a definite refusal (a
	// conflict, not found, forbidden, invalid): the write did not land. After
	// any other error it is unknown whether it landed.
	IsRefused(err error) bool
}

// Store is what the jobs need of PostgreSQL: KEB's instances, read only, and
// the job's own tables.
type Store interface {
	// DatabaseTime is the database's clock, the one KEB's rows, the
	// candidate table's age and withdrawals are timed by.
	DatabaseTime(ctx context.Context) (time.Time, error)
	ReadInstanceCounts(ctx context.Context) (hap.InstanceRead, error)
	RecordFindings(ctx context.Context, findings []hap.Finding, now time.Time) (opened, resolved int, err error)
	OpenFindings(ctx context.Context, ga string) ([]hap.OpenFinding, error)
	ReplaceCandidates(ctx context.Context, rows []hap.Candidate, absorbed []string, computedAt time.Time, reservationTTL time.Duration) error
	// EndWithdrawals ends the withdrawals (provisioning.WithdrawBinding, a
	// release's retirement) made before a snapshot taken at takenAt whose
	// binding is not among dirty: that snapshot shows it cleaned, never
	// marked or gone, and the candidate rows decide again.
	EndWithdrawals(ctx context.Context, takenAt time.Time, dirty []string) (ended int, err error)
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
	// RecordRelease appends r to the release history, stamped with the
	// database's time, and returns the row's ID.
	RecordRelease(ctx context.Context, r hap.ReleaseRecord) (int64, error)
	// OpenReleaseIntents returns the release intents no outcome row settles
	// yet (see release_audit.go).
	OpenReleaseIntents(ctx context.Context) ([]hap.OpenIntent, error)
	// RecordPoolSamples appends the free and claimed bindings of every
	// dedicated pool and prunes what is older than retention.
	RecordPoolSamples(ctx context.Context, at time.Time, stats []hap.PoolStats, retention time.Duration) error
	// PoolHistory returns the samples recorded since, per pool.
	PoolHistory(ctx context.Context, since time.Time) (map[hap.Pool][]hap.PoolSample, error)
	// ShadowInputs returns KEB's placed instances since `since` (those in
	// the maxAge before it marked compared) and the candidate table's
	// versions and rewrites over that time.
	ShadowInputs(ctx context.Context, since time.Time, maxAge time.Duration) (hap.ShadowInput, error)
	// RecordShadow keeps each compared pick once and prunes what is older
	// than retention.
	RecordShadow(ctx context.Context, results []hap.ShadowResult, retention, maxAge time.Duration) error
	// ShadowPicks returns the picks compared since `since`.
	ShadowPicks(ctx context.Context, since time.Time) ([]hap.ShadowResult, error)
}

// Metrics is what the jobs report: each run's figures, replaced whole, and
// what came of each job and release.
type Metrics interface {
	JobDone(job string, took time.Duration, err error, now time.Time)
	SetFleet(hap.Fleet)
	SetDrift(open []hap.OpenFinding)
	CandidatesComputed(snapshotAt time.Time)
	SetShadow(tally map[string]int)
	Release(mode, outcome string)
	GuardTripped()
}

// Ports is what every job works through: the two systems, its metrics and
// log, and the one clock of the run.
type Ports struct {
	Gardener Gardener
	Store    Store
	Metrics  Metrics
	Log      *zap.Logger
	Now      func() time.Time
}

// Work is one job's part of a run: the ports, whether the run is a dry run,
// and what the job may ask of the run's lock. A job gets its own settings
// beside it, never the whole configuration.
type Work struct {
	Ports
	Job    string
	DryRun bool

	held func(context.Context) error
	hook func(job string)
}

// stillLocked fails when the run lock was lost since the run took it:
// another run may be working alongside, so this one must not change what it
// cannot undo.
func (w *Work) stillLocked(ctx context.Context) error {
	if w.held == nil {
		return nil
	}
	return w.held(ctx)
}

// decided marks the line between deciding and acting.
func (w *Work) decided() {
	// Its timestamp splits the job's time into deciding and acting, for
	// the benchmark and for anyone reading a slow run's debug log.
	w.Log.Debug("decided", zap.String("job", w.Job))
	if w.hook != nil {
		w.hook(w.Job)
	}
}
