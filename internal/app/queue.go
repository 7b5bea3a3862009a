package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// JobQueue runs a long-lived process's jobs one at a time (they share the
// landscape's lock): on their schedules, and the candidates job after a
// change in Gardener. A job that was waiting for another when Stopping
// ended does not start: shutdown waits for the running job only. Jobs run
// with JobCtx.
type JobQueue struct {
	Env              *Env
	Stopping, JobCtx context.Context
	DryRun           jobs.DryRun
	// Completed, when set, hears of every run that ended, whatever its
	// outcome (Liveness.Completed).
	Completed func(job string)
	// rewrites, when set, hears when a candidates run begins and which
	// watch it reads (serve's proofs, seen.go).
	rewrites *rewrites

	oneAtATime sync.Mutex
}

// Run runs one job now, after the one running, if any; why names the
// trigger in the log.
func (q *JobQueue) Run(job, why string) {
	q.oneAtATime.Lock()
	defer q.oneAtATime.Unlock()
	if q.Stopping.Err() != nil {
		q.Env.Log.Info("stopping: not starting a run that waited for another", zap.String("job", job))
		return
	}
	if err := q.Env.ReloadGardener(q.JobCtx); err != nil {
		q.Env.Log.Error("reading Gardener with the kubeconfig loaded before", zap.String("job", job), zap.Error(err))
	}
	if q.rewrites != nil && job == jobs.JobCandidates {
		// After the reload: the watch the run's gather reads, and how
		// many changes its cache had taken in before it does.
		defer q.rewrites.began(q.Env.bindingsWatch())()
	}
	err := q.Env.Runner.Run(q.JobCtx, jobs.Options{Jobs: []string{job}, DryRun: q.DryRun})
	if q.Completed != nil {
		q.Completed(job)
	}
	switch {
	case errors.Is(err, jobs.ErrLockHeld):
		q.Env.Log.Info("another pod holds this landscape's lock; skipping this run", zap.String("job", job))
	case err != nil:
		q.Env.Log.Error(why+" run failed", zap.String("job", job), zap.Error(err))
	}
}

// Schedule registers each job on its own schedule (schedules.<job>, else the
// job's default); a job whose previous run is still going is skipped rather
// than queued. The caller starts and stops the returned cron.
func (q *JobQueue) Schedule() (*cron.Cron, error) {
	logger := cronLogger{q.Env.Log}
	c := cron.New(cron.WithLogger(logger), cron.WithChain(cron.Recover(logger)))
	schedules := q.Env.Config.Jobs.CronSchedules()
	for _, job := range jobs.AllJobs {
		spec := schedules[job]
		run := cron.NewChain(cron.SkipIfStillRunning(logger)).Then(cron.FuncJob(func() { q.Run(job, "scheduled") }))
		if _, err := c.AddJob(spec, run); err != nil {
			return nil, fmt.Errorf("schedules.%s: %q: %w", job, spec, err)
		}
	}
	return c, nil
}

// How a long-lived process answers a change the watch saw: after
// changeSettle without a further change, or changeMaxDelay after the first
// one of a burst at the latest, one candidates run brings the table up to
// date. Its rewrite touches only the rows that changed.
const (
	changeSettle   = time.Second
	changeMaxDelay = 5 * time.Second
)

// Changes returns the function a watch calls on a change
// (gardener.WithChanges) and the channel ReactToChanges reads. Changes
// that come while one is pending merge into it: the run it starts sees
// them all.
func Changes() (notify func(), changes <-chan struct{}) {
	c := make(chan struct{}, 1)
	return func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}, c
}

// ReactToChanges runs the candidates job after each burst of changes until
// Stopping ends. The scheduled full runs stay the reconciler of record.
func (q *JobQueue) ReactToChanges(changes <-chan struct{}) {
	for {
		select {
		case <-q.Stopping.Done():
			return
		case <-changes:
		}
		settle, latest := time.NewTimer(changeSettle), time.NewTimer(changeMaxDelay)
	burst:
		for {
			select {
			case <-q.Stopping.Done():
				settle.Stop()
				latest.Stop()
				return
			case <-changes:
				settle.Reset(changeSettle)
			case <-settle.C:
				break burst
			case <-latest.C:
				break burst
			}
		}
		settle.Stop()
		latest.Stop()
		q.Run(jobs.JobCandidates, "change-driven")
	}
}

// cronLogger routes robfig/cron's logs to zap.
type cronLogger struct{ log *zap.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug(msg, zap.Any("details", kv)) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error(msg, zap.Error(err), zap.Any("details", kv))
}
