// Package jobs runs the four jobs of hap-reconciler. Each job is one file,
// named after it, that reads gather -> decide -> act from top to bottom;
// this file holds what they share: the runner, job selection and locking.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/config"
	"github.com/kyma-project/hap-reconciler/metrics"
)

// Job names, in the order a run executes them: candidates use nothing drift
// writes, but an operator reading the logs sees findings before the table.
const (
	JobDrift      = "drift"
	JobCandidates = "candidates"
	JobRelease    = "release"
	JobMetrics    = "metrics"
)

// AllJobs lists every job in run order.
var AllJobs = []string{JobDrift, JobCandidates, JobRelease, JobMetrics}

// ParseJobs reads a comma-separated job list such as "drift,candidates".
func ParseJobs(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return AllJobs, nil
	}
	want := map[string]bool{}
	for _, j := range strings.Split(list, ",") {
		j = strings.TrimSpace(j)
		if !slices.Contains(AllJobs, j) {
			return nil, fmt.Errorf("--jobs: unknown job %q (known: %s)", j, strings.Join(AllJobs, ", "))
		}
		want[j] = true
	}
	var jobs []string
	for _, j := range AllJobs {
		if want[j] {
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// Locker keeps runs of one landscape from overlapping across pods.
type Locker interface {
	// TryRunLock takes the lock without waiting; acquired is false when
	// another run holds it.
	TryRunLock(ctx context.Context) (lock RunLock, acquired bool, err error)
}

// RunLock is a held run lock. It can be lost while held (its database
// session ended), after which another run may start alongside.
type RunLock interface {
	// Held fails once the lock may have been lost.
	Held(ctx context.Context) error
	Release()
}

// ErrLockHeld means another run holds the landscape's lock; nothing was done.
var ErrLockHeld = errors.New("another hap-reconciler run holds the lock for this landscape")

// Runner runs jobs against one landscape.
type Runner struct {
	Config   config.Config
	Gardener Gardener
	Store    Store
	Locker   Locker
	Metrics  *metrics.Metrics
	Log      *zap.Logger
	Now      func() time.Time

	// BeforeAct, when set, is called by each job between deciding and acting.
	// Tests use it to change the world at the worst possible moment.
	BeforeAct func(job string)

	// lock is the run lock while Run holds it.
	lock RunLock
}

// Options select what one run does.
type Options struct {
	Jobs   []string
	DryRun bool
}

// Run gathers the fleet once and runs the selected jobs on it. It returns
// ErrLockHeld when another run is active, and the joined errors of the jobs
// that failed otherwise; a failed job does not stop the others, except that a
// failed gathering fails them all.
func (r *Runner) Run(ctx context.Context, opts Options) error {
	if r.Locker != nil {
		lock, ok, err := r.Locker.TryRunLock(ctx)
		if err != nil {
			return fmt.Errorf("taking the run lock: %w", err)
		}
		if !ok {
			return ErrLockHeld
		}
		r.lock = lock
		defer func() {
			r.lock = nil
			lock.Release()
		}()
	}
	start := r.Now()
	facts, err := r.Gather(ctx)
	if err != nil {
		for _, job := range opts.Jobs {
			r.Metrics.JobDone(job, r.Now().Sub(start), err, r.Now())
		}
		return fmt.Errorf("the picture is incomplete, nothing was changed: %w", err)
	}
	var errs []error
	for _, job := range opts.Jobs {
		jobStart := r.Now()
		err := r.runJob(ctx, job, facts, opts)
		r.Metrics.JobDone(job, r.Now().Sub(jobStart), err, r.Now())
		if err != nil {
			r.Log.Error("job failed", zap.String("job", job), zap.Error(err))
			errs = append(errs, fmt.Errorf("%s: %w", job, err))
			continue
		}
		r.Log.Info("job done", zap.String("job", job), zap.Duration("took", r.Now().Sub(jobStart)))
	}
	return errors.Join(errs...)
}

func (r *Runner) runJob(ctx context.Context, job string, f *Facts, opts Options) error {
	switch job {
	case JobDrift:
		return r.drift(ctx, f)
	case JobCandidates:
		return r.candidates(ctx, f)
	case JobRelease:
		return r.release(ctx, f, opts.DryRun)
	case JobMetrics:
		return r.fleetMetrics(ctx, f)
	}
	return fmt.Errorf("unknown job %q", job)
}

// stillLocked fails when the run lock was lost since Run took it: another
// run may be working alongside, so this one must not change what it cannot
// undo. Without a Locker there is nothing to lose.
func (r *Runner) stillLocked(ctx context.Context) error {
	if r.lock == nil {
		return nil
	}
	return r.lock.Held(ctx)
}

func (r *Runner) beforeAct(job string) {
	// Its timestamp splits the job's time into deciding and acting, for
	// the benchmark and for anyone reading a slow run's debug log.
	r.Log.Debug("decided", zap.String("job", job))
	if r.BeforeAct != nil {
		r.BeforeAct(job)
	}
}
