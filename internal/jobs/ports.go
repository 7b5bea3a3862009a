package jobs

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Gardener is what the jobs need of the Gardener API. It is one contract,
// not a job's part: the process chooses among several sources (the API, its
// watch caches, export files) and each serves all of it.
type Gardener interface {
	gatherGardener
	releaseGardener
}

// Store is what the jobs need of PostgreSQL: what every run reads (the
// database's clock and KEB's instances, gather.go) and each job's own
// port, declared beside the job's work. An adapter serves it whole, and
// the compiler holds it to that where it is handed over (internal/app's
// ports.go asserts it for every adapter): a job that declares a method no
// adapter has does not build.
type Store interface {
	gatherStore
	driftStore
	candidatesStore
	shadowStore
	releaseStore
	metricsStore
	retentionStore
}

// Metrics is what the runner and the jobs report: what came of each job,
// whether the run's picture was believed (runMetrics), and each job's own
// port, declared beside the job's work.
type Metrics interface {
	runMetrics
	driftMetrics
	candidatesMetrics
	shadowMetrics
	releaseMetrics
	metricsPort
	retentionMetrics
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
