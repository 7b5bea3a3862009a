// Package jobs runs the jobs of hap-reconciler. Each job is one file, named
// after it, that declares the job (a Job: its name, default schedule and
// how a run is built; its settings' struct with their defaults and checks;
// its ports), is listed once in Registry (registry.go), has its section in
// Setup (setup.go) when it has settings, and reads gather -> decide -> act
// from top to bottom; this file holds the runner and its locking.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

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

// runMetrics is what the runner reports of every run.
type runMetrics interface {
	JobDone(job string, took time.Duration, err error, now time.Time)
	// PictureImplausible says whether the run's picture was refused as
	// implausible (Runner.Run) or believed.
	PictureImplausible(refused bool)
}

// ErrLockHeld means another run holds the landscape's lock; nothing was done.
var ErrLockHeld = errors.New("another hap-reconciler run holds the lock for this landscape")

// ErrImplausible means the run gathered a picture it cannot believe
// (hap.Implausible) and ran no job on it.
var ErrImplausible = errors.New("the picture is implausible")

// Runner runs jobs against one landscape. It holds the jobs as configured
// (NewRunner) and the ports, and builds each job anew for every run on
// them; it keeps no configuration of its own.
type Runner struct {
	Ports
	Locker Locker

	// BeforeAct, when set, is called by each job between deciding and acting.
	// Tests use it to change the world at the worst possible moment.
	BeforeAct func(job string)

	setup Setup
	// tidied is when the retention step last ran (Runner.Run).
	tidied time.Time
	gather func(Ports) *gatherer
	// lock is the run lock while Run holds it.
	lock RunLock
}

// NewRunner returns the runner that runs the jobs of the registry, each
// with its own section of the resolved setup s, and the gathering with
// KEB's policy and rules, through p under locker's lock (none when nil).
func NewRunner(s Setup, p Ports, locker Locker) *Runner {
	return &Runner{Ports: p, Locker: locker, setup: s, gather: configureGather(s.KEB)}
}

// Gather reads a fresh snapshot of Gardener and KEB's database, writing
// nothing: what every run decides on, and what a live report shows.
func (r *Runner) Gather(ctx context.Context) (*Facts, error) {
	return r.gather(r.Ports).gather(ctx)
}

// Options select what one run does.
type Options struct {
	Jobs   []string
	DryRun DryRun
}

// Run gathers the fleet once and runs the selected jobs on it. It returns
// ErrLockHeld when another run is active, and the joined errors of the jobs
// that failed otherwise; a failed job does not stop the others, except that
// an unknown job or a failed gathering fails them all before anything is
// changed. Every run that ran its jobs ends with the
// retention step (retention.go), whichever jobs it ran, unless the step ran
// less than tidyEvery before.
func (r *Runner) Run(ctx context.Context, opts Options) error {
	unlock, err := r.takeLock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	start := r.Now()
	tasks, err := r.build(opts)
	if err != nil {
		r.failAll(opts.Jobs, 0, err)
		return fmt.Errorf("nothing was read or changed: %w", err)
	}
	facts, err := r.Gather(ctx)
	if err != nil {
		r.failAll(opts.Jobs, r.Now().Sub(start), err)
		return fmt.Errorf("the picture is incomplete, nothing was changed: %w", err)
	}
	if err := r.believe(facts); err != nil {
		r.failAll(opts.Jobs, r.Now().Sub(start), err)
		return err
	}
	var errs []error
	for i, job := range opts.Jobs {
		jobStart := r.Now()
		err := tasks[i].Run(ctx, facts)
		r.Metrics.JobDone(job, r.Now().Sub(jobStart), err, r.Now())
		if err != nil {
			r.Log.Error("job failed", zap.String("job", job), zap.Error(err))
			errs = append(errs, fmt.Errorf("%s: %w", job, err))
			continue
		}
		r.Log.Info("job done", zap.String("job", job), zap.Duration("took", r.Now().Sub(jobStart)))
	}
	if r.Now().Sub(r.tidied) >= tidyEvery {
		if err := newRetention(r.Ports, r.setup.keeps(), opts.DryRun).Run(ctx); err != nil {
			r.Log.Error("retention failed", zap.Error(err))
			errs = append(errs, err)
		} else {
			r.tidied = r.Now()
		}
	}
	return errors.Join(errs...)
}

// takeLock takes the run lock, when the runner has a Locker, and returns
// what lets it go; ErrLockHeld when another run holds it.
func (r *Runner) takeLock(ctx context.Context) (unlock func(), err error) {
	if r.Locker == nil {
		return func() {}, nil
	}
	lock, ok, err := r.Locker.TryRunLock(ctx)
	if err != nil {
		return nil, fmt.Errorf("taking the run lock: %w", err)
	}
	if !ok {
		return nil, ErrLockHeld
	}
	r.lock = lock
	return func() {
		r.lock = nil
		lock.Release()
	}, nil
}

// failAll reports err for every job of a run that ran none of them, each
// as having taken took.
func (r *Runner) failAll(jobs []string, took time.Duration, err error) {
	for _, job := range jobs {
		r.Metrics.JobDone(job, took, err, r.Now())
	}
}

// believe refuses a picture no job may decide on (hap.Implausible): every
// job is refused alike, so the drift history, the candidate table, the
// release clocks and the pool metrics all stay as the last believable
// picture left them. The error names the namespace, the usual culprit.
func (r *Runner) believe(f *Facts) error {
	why := hap.Implausible(f.Tally)
	r.Metrics.PictureImplausible(why != "")
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w, nothing was changed: namespace %q: %s; check that the namespace (--namespace, namespace:) is KEB's Gardener project "+
		"and that the kubeconfig reaches KEB's garden", ErrImplausible, r.Namespace, why)
}

// tidyEvery is how often at most the retention step runs: serve reruns the
// candidates job on every change of the bindings, and the step, which reads
// every table, need not follow each rerun. Retentions are days long.
const tidyEvery = time.Minute

// build makes a task of each selected job for this run on the runner's
// ports: an unknown job fails the run before it reads anything.
func (r *Runner) build(opts Options) ([]task, error) {
	tasks := make([]task, len(opts.Jobs))
	var errs []error
	for i, name := range opts.Jobs {
		j, ok := lookupJob(name)
		if !ok {
			errs = append(errs, fmt.Errorf("unknown job %q", name))
			continue
		}
		tasks[i] = j.build(r.setup, r.Ports, Pass{Job: name, DryRun: opts.DryRun, Log: r.Log, held: r.stillLocked, hook: r.BeforeAct})
	}
	return tasks, errors.Join(errs...)
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
