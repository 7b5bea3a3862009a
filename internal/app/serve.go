package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// shutdownGrace is how long a running job may go on after SIGTERM before
// its context is cancelled; every job leaves things consistent when
// cancelled.
const shutdownGrace = 45 * time.Second

// Server is the job as a long-lived process runs it: each job on its own
// schedule, Gardener watched, the candidates job after a change. This file
// is the one place serve is run: HTTP, readiness, schedules, reaction to
// changes and shutdown.
type Server struct {
	*Env
	// StuckAfterRuns is how many of a job's scheduled times may pass
	// without a run of it completing before /healthz fails (Liveness);
	// 0 means DefaultStuckAfterRuns.
	StuckAfterRuns int

	dryRun     jobs.DryRun
	jobCtx     context.Context
	cancelJobs context.CancelFunc
	changes    <-chan struct{}
	rewrites   *rewrites
}

// OpenServer opens the job as serve runs it. Jobs outlive the caller's
// context (SIGTERM) by shutdownGrace, then are cancelled, and the watch of
// Gardener ends with them: between runs, shoots and bindings are kept
// current by watching, so a scheduled run reads them from memory instead of
// paging the whole namespace again, and a change a decision reads brings
// the candidate table up to date within seconds. dryRun says what every run
// leaves as it is (jobs.DryRun).
func OpenServer(ctx context.Context, s Inputs, dryRun jobs.DryRun) (*Server, error) {
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	notify, changes := Changes()
	s.Watch = &Watch{Context: jobCtx, Options: []gardener.WatchOption{gardener.WithChanges(notify)}}
	written := &rewrites{}
	s.CandidatesWritten = written.written
	needs := Needs{Gardener: true, Database: true, Migrate: true}
	if dryRun.KeepsKEBsTables() {
		// A dry run changes no table: it serves on a schema at this
		// release's version or not at all.
		needs = Needs{Gardener: true, Database: true, CurrentSchema: true}
	}
	env, err := Open(ctx, s, needs)
	if err != nil {
		cancelJobs()
		return nil, err
	}
	return &Server{Env: env, dryRun: dryRun, jobCtx: jobCtx, cancelJobs: cancelJobs, changes: changes, rewrites: written}, nil
}

// Close cancels whatever job still runs, ends the watch and closes the
// database connections.
func (sv *Server) Close() {
	sv.cancelJobs()
	sv.Env.Close()
}

// Serve serves /metrics, /healthz and /readyz on ln and runs the jobs until
// ctx ends: then it stops scheduling, lets the running job finish (or
// cancels it after shutdownGrace) and shuts the HTTP server down.
func (sv *Server) Serve(ctx context.Context, ln net.Listener) error {
	liveness, err := newLiveness(sv.Config.Jobs.CronSchedules(), cmp.Or(sv.StuckAfterRuns, DefaultStuckAfterRuns), sv.Runner.Now)
	if err != nil {
		return err
	}
	sv.Metrics.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var ready atomic.Bool
	srv := sv.serveHTTP(ln, &ready, liveness)

	queue := &JobQueue{Env: sv.Env, Stopping: ctx, JobCtx: sv.jobCtx, DryRun: sv.dryRun, Completed: liveness.Completed, rewrites: sv.rewrites}
	scheduler, err := queue.Schedule()
	if err != nil {
		return err
	}
	// SIGTERM ends the wait: the first fill of a large fleet, or one the
	// API server keeps refusing, may take minutes.
	if err := sv.WaitForGardener(ctx); err != nil {
		if ctx.Err() != nil {
			sv.Log.Info("stopped before the first list of Gardener was complete; nothing was run")
			return srv.Close()
		}
		return err
	}
	reacting := make(chan struct{})
	go func() {
		defer close(reacting)
		queue.ReactToChanges(sv.changes)
	}()
	proving := sv.proveSeen(ctx)
	liveness.Start()
	scheduler.Start()
	ready.Store(true)

	<-ctx.Done()
	sv.Log.Info("stopping: no new runs are scheduled; waiting for the running job")
	ready.Store(false)
	return sv.drain(srv, scheduler.Stop().Done(), reacting, proving)
}

// serveHTTP serves /metrics, /healthz and /readyz on ln until the server
// is shut down.
func (sv *Server) serveHTTP(ln net.Listener, ready *atomic.Bool, liveness *Liveness) *http.Server {
	srv := &http.Server{Handler: sv.handler(ready, liveness), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			sv.Log.Error("http server stopped", zap.Error(err))
		}
	}()
	sv.Log.Info("serving", zap.String("listen", ln.Addr().String()))
	return srv
}

// drain waits for what is still running (the scheduled jobs, the
// change-driven runs, the proofs), cancelling the jobs after shutdownGrace,
// then shuts the HTTP server down.
func (sv *Server) drain(srv *http.Server, running ...<-chan struct{}) error {
	select {
	case <-allDone(running...):
	case <-time.After(shutdownGrace):
		sv.Log.Warn("running job did not finish within the grace period; cancelling it")
		sv.cancelJobs()
		<-allDone(running...)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	sv.Log.Info("stopped")
	return nil
}

// proveSeen proves and stamps how far the candidate table has seen Gardener
// (seen.go) every candidates.gardenerSeenEvery until ctx ends, and returns
// a channel closed once it stopped. A dry run writes no table, and 0 turns
// the proofs off: then nothing is proved.
func (sv *Server) proveSeen(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	every := sv.Config.Jobs.Candidates.GardenerSeenEvery.Duration
	if every <= 0 || sv.dryRun.KeepsKEBsTables() || sv.Store == nil || sv.bindingsWatch() == nil {
		close(done)
		return done
	}
	sv.Metrics.GardenerSeenOutcomes(SeenOutcomes)
	p := &seenProber{every: every, store: sv.Store, watch: sv.bindingsWatch, rewrites: sv.rewrites, metrics: sv.Metrics, log: sv.Log}
	go func() {
		defer close(done)
		p.run(ctx)
	}()
	return done
}

// handler serves the metrics; liveness (/healthz, the chart's liveness
// probe), which fails once the scheduler is stuck (Liveness), so the
// kubelet restarts the pod; and readiness (/readyz, the readiness probe)
// once the first full picture of Gardener is held and the schedules run.
func (sv *Server) handler(ready *atomic.Bool, liveness *Liveness) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(sv.Metrics.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if stuck := liveness.Stuck(); len(stuck) > 0 {
			sv.Log.Error("the scheduler is stuck: /healthz fails, so the kubelet restarts the pod", zap.Strings("stuck", stuck))
			http.Error(w, "stuck: "+strings.Join(stuck, "; "), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
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
