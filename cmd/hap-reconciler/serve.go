package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/gardener"
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
			env, s, err := g.openToServe(cmd.Context(), listen, dryRun)
			if err != nil {
				return err
			}
			defer env.Close()
			defer s.cancelJobs()
			return serve(cmd.Context(), env, s)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address for /metrics, /healthz and /readyz (default metrics.listen, :8080)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "every scheduled release decides and audits would-releases and changes no binding")
	return cmd
}

// openToServe opens the job as serve runs it. Jobs outlive SIGTERM by the
// grace period, then are cancelled, and the watch of Gardener ends with
// them: between runs, shoots and bindings are kept current by watching, so
// a scheduled run reads them from memory instead of paging the whole
// namespace again, and a change a decision reads brings the candidate table
// up to date within seconds.
func (g *globals) openToServe(ctx context.Context, listen string, dryRun bool) (*environment, serving, error) {
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	changed, changes := app.Changes()
	env, err := g.openWatching(ctx, openForServe, &app.Watch{Context: jobCtx, Options: []gardener.WatchOption{gardener.WithChanges(changed)}})
	if err != nil {
		cancelJobs()
		return nil, serving{}, err
	}
	if listen == "" {
		listen = env.Config.Metrics.Listen
	}
	return env, serving{listen: listen, dryRun: dryRun, jobCtx: jobCtx, cancelJobs: cancelJobs, changes: changes}, nil
}

// serving is what serve runs with: where it listens, whether releases are
// dry runs, the jobs' context (see serveCmd) and the changes the watch saw.
type serving struct {
	listen     string
	dryRun     bool
	jobCtx     context.Context
	cancelJobs context.CancelFunc
	changes    <-chan struct{}
}

func serve(ctx context.Context, env *environment, s serving) error {
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
	ln, err := net.Listen("tcp", s.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: %w", s.listen, err)}
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			env.Log.Error("http server stopped", zap.Error(err))
		}
	}()
	env.Log.Info("serving", zap.String("listen", ln.Addr().String()))

	queue := &app.JobQueue{Env: env, Stopping: ctx, JobCtx: s.jobCtx, DryRun: s.dryRun}
	scheduler, err := queue.Schedule()
	if err != nil {
		return usageError{err}
	}
	if err := env.WaitForGardener(s.jobCtx); err != nil {
		return err
	}
	reacting := make(chan struct{})
	go func() {
		defer close(reacting)
		queue.ReactToChanges(s.changes)
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
		s.cancelJobs()
		<-allDone(stopped.Done(), reacting)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
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
