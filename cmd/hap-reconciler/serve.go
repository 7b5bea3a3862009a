package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/robfig/cron/v3"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/gardener"
	"github.com/kyma-project/hap-reconciler/jobs"
)

// shutdownGrace is how long a running job may go on after SIGTERM before its
// context is cancelled; every job leaves things consistent when cancelled.
const shutdownGrace = 45 * time.Second

func serveCmd(g *globals) *cobra.Command {
	var (
		listen string
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run each job on its own cron schedule and serve /metrics, /healthz and /readyz",
		Long: `Runs as a long-lived process: each job runs on its schedule from the
configuration (schedules.*), never overlapping itself or another job of this
process, and across pods only one run per landscape holds the lock. SIGTERM
stops scheduling and lets the running job finish (or cancels it after a grace
period, which leaves everything consistent).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := g.open(cmd.Context(), openForServe)
			if err != nil {
				return err
			}
			defer env.Close()
			if listen == "" {
				listen = env.Config.Metrics.Listen
			}
			return serve(cmd.Context(), env, listen, dryRun)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address for /metrics, /healthz and /readyz (default metrics.listen, :8080)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "every scheduled release decides and audits would-releases and changes no binding")
	return cmd
}

func serve(ctx context.Context, env *environment, listen string, dryRun bool) error {
	env.Metrics.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var ready atomic.Bool
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(env.Metrics.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: %w", listen, err)}
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			env.Log.Error("http server stopped", zap.Error(err))
		}
	}()
	env.Log.Info("serving", zap.String("listen", ln.Addr().String()))

	// Jobs outlive SIGTERM by the grace period, then are cancelled.
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	runner := &jobRunner{env: env, stopping: ctx, jobCtx: jobCtx, dryRun: dryRun}
	scheduler, err := schedule(runner)
	if err != nil {
		return err
	}
	// Between runs, shoots and bindings are kept current by watching, so a
	// scheduled run reads them from memory instead of paging the whole
	// namespace again; a change a decision reads brings the candidate table
	// up to date within seconds. The watch ends with the jobs.
	changes := make(chan struct{}, 1)
	changed := func() {
		select {
		case changes <- struct{}{}:
		default: // one is pending already: the run it starts sees this change too
		}
	}
	if err := env.WatchGardener(jobCtx, gardener.WithChanges(changed)); err != nil {
		return err
	}
	reacting := make(chan struct{})
	go func() {
		defer close(reacting)
		reactToChanges(runner, changes)
	}()
	scheduler.Start()
	ready.Store(true)

	<-ctx.Done()
	env.Log.Info("stopping: no new runs are scheduled; waiting for the running job")
	ready.Store(false)
	stopped := scheduler.Stop()
	select {
	case <-allDone(stopped.Done(), reacting):
	case <-time.After(shutdownGrace):
		env.Log.Warn("running job did not finish within the grace period; cancelling it")
		cancelJobs()
		<-allDone(stopped.Done(), reacting)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// jobRunner runs this process's jobs one at a time (they share the
// landscape's lock). A job that was waiting for another when stopping ended
// does not start: shutdown waits for the running job only. Jobs run with
// jobCtx.
type jobRunner struct {
	env              *environment
	stopping, jobCtx context.Context
	dryRun           bool
	oneAtATime       sync.Mutex
}

func (r *jobRunner) run(job, why string) {
	r.oneAtATime.Lock()
	defer r.oneAtATime.Unlock()
	if r.stopping.Err() != nil {
		r.env.Log.Info("stopping: not starting a run that waited for another", zap.String("job", job))
		return
	}
	err := r.env.Runner.Run(r.jobCtx, jobs.Options{Jobs: []string{job}, DryRun: r.dryRun})
	switch {
	case errors.Is(err, jobs.ErrLockHeld):
		r.env.Log.Info("another pod holds this landscape's lock; skipping this run", zap.String("job", job))
	case err != nil:
		r.env.Log.Error(why+" run failed", zap.String("job", job), zap.Error(err))
	}
}

// schedule registers each job on its own schedule; a job whose previous
// run is still going is skipped rather than queued.
func schedule(r *jobRunner) (*cron.Cron, error) {
	logger := cronLogger{r.env.Log}
	c := cron.New(cron.WithLogger(logger), cron.WithChain(cron.Recover(logger)))
	s := r.env.Config.Schedules
	for job, spec := range map[string]string{
		jobs.JobDrift: s.Drift, jobs.JobCandidates: s.Candidates, jobs.JobRelease: s.Release, jobs.JobMetrics: s.Metrics,
	} {
		run := cron.NewChain(cron.SkipIfStillRunning(logger)).Then(cron.FuncJob(func() { r.run(job, "scheduled") }))
		if _, err := c.AddJob(spec, run); err != nil {
			return nil, usageError{fmt.Errorf("schedules.%s: %q: %w", job, spec, err)}
		}
	}
	return c, nil
}

// How serve answers a change the watch saw: after changeSettle without a
// further change, or changeMaxDelay after the first one of a burst at the
// latest, one candidates run brings the table up to date. Its rewrite
// touches only the rows that changed.
const (
	changeSettle   = time.Second
	changeMaxDelay = 5 * time.Second
)

// reactToChanges runs the candidates job after each burst of changes until
// stopping ends. The scheduled full runs stay the reconciler of record.
func reactToChanges(r *jobRunner, changes <-chan struct{}) {
	for {
		select {
		case <-r.stopping.Done():
			return
		case <-changes:
		}
		settle, latest := time.NewTimer(changeSettle), time.NewTimer(changeMaxDelay)
	burst:
		for {
			select {
			case <-r.stopping.Done():
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
		r.run(jobs.JobCandidates, "change-driven")
	}
}

// allDone is closed once every one of chans is.
func allDone(chans ...<-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for _, c := range chans {
			<-c
		}
		close(done)
	}()
	return done
}

// cronLogger routes robfig/cron's logs to zap.
type cronLogger struct{ log *zap.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug(msg, zap.Any("details", kv)) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error(msg, zap.Error(err), zap.Any("details", kv))
}
