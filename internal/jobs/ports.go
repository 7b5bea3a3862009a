package jobs

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Gardener is what the jobs need of the Gardener API: the union of the
// ports each job declares in its own file.
type Gardener interface {
	gatherGardener
	releaseGardener
}

// Store is what the jobs need of PostgreSQL: KEB's instances, read only, and
// the job's own tables; the union of the ports each job declares.
type Store interface {
	gatherStore
	driftStore
	candidatesStore
	shadowStore
	releaseStore
	metricsStore
}

// Metrics is what the runner and the jobs report: what came of each job, and
// each job's own figures (its port, in its file).
type Metrics interface {
	JobDone(job string, took time.Duration, err error, now time.Time)
	// PictureImplausible says whether the run's picture was refused as
	// implausible (Runner.Run) or believed.
	PictureImplausible(refused bool)
	driftMetrics
	candidatesMetrics
	shadowMetrics
	releaseMetrics
	metricsPort
}

// Ports is what a run works through: the two systems, the metrics and log,
// and the one clock of the run. Each job keeps only its narrow part.
type Ports struct {
	// Namespace is the Gardener project the picture comes from, named
	// when a run refuses it.
	Namespace string
	Gardener  Gardener
	Store     Store
	Metrics   Metrics
	Log       *zap.Logger
	Now       func() time.Time
}

// Pass is what one run hands each job: the job's name and the log, what
// the run leaves as it is (DryRun), and what the job may ask of the run's
// lock.
type Pass struct {
	Job    string
	DryRun DryRun
	Log    *zap.Logger

	held func(context.Context) error
	hook func(job string)
}

// DryRun says what a run leaves as it is.
type DryRun int

const (
	// NoDryRun: every job acts.
	NoDryRun DryRun = iota
	// DryRunRelease: the release decides, re-checks and audits its
	// would-releases and changes no binding; every other job acts, the
	// candidate table KEB provisions from included (the chart's
	// release.dryRun).
	DryRunRelease
	// DryRunAll: every job decides and reports what it would do and
	// writes nothing at all (--dry-run): no binding, no table KEB's read
	// path reads (the candidate table, its reservations, the withdrawals,
	// the recorded claims, the listed instances), no record of the job's
	// own (drift history, shadow picks, pool history, release clocks and
	// audit) and no counter. A dry run is how an operator tries a
	// configuration: one with a wrong namespace or no KEB policy must not
	// resolve real findings or restart the timers alerts wait on.
	DryRunAll
)

// ChangesNoBinding reports whether the release must leave every binding as
// it is.
func (d DryRun) ChangesNoBinding() bool { return d != NoDryRun }

// WritesNothing reports whether the run must write nothing at all: no
// table, no binding, no counter.
func (d DryRun) WritesNothing() bool { return d == DryRunAll }

// KeepsKEBsTables reports whether the tables KEB's read path reads
// (provisioning.NextBinding, RecordClaim, WithdrawBinding) must stay as they
// are.
func (d DryRun) KeepsKEBsTables() bool { return d == DryRunAll }

// stillLocked fails when the run lock was lost since the run took it:
// another run may be working alongside, so this one must not change what it
// cannot undo.
func (p Pass) stillLocked(ctx context.Context) error {
	if p.held == nil {
		return nil
	}
	return p.held(ctx)
}

// decided marks the line between deciding and acting.
func (p Pass) decided() {
	// Its timestamp splits the job's time into deciding and acting, for
	// the benchmark and for anyone reading a slow run's debug log.
	p.Log.Debug("decided", zap.String("job", p.Job))
	if p.hook != nil {
		p.hook(p.Job)
	}
}
