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
	fleetStore
}

// Metrics is what the runner and the jobs report: what came of each job, and
// each job's own figures (its port, in its file).
type Metrics interface {
	JobDone(job string, took time.Duration, err error, now time.Time)
	driftMetrics
	candidatesMetrics
	shadowMetrics
	releaseMetrics
	fleetMetricsPort
}

// Ports is what a run works through: the two systems, the metrics and log,
// and the one clock of the run. Each job keeps only its narrow part.
type Ports struct {
	Gardener Gardener
	Store    Store
	Metrics  Metrics
	Log      *zap.Logger
	Now      func() time.Time
}

// Pass is what one run hands each job: the job's name and the log, whether
// the run is a dry run, and what the job may ask of the run's lock.
type Pass struct {
	Job    string
	DryRun bool
	Log    *zap.Logger

	held func(context.Context) error
	hook func(job string)
}

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
