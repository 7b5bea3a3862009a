package main

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

func serveCmd(g *globals) *cobra.Command {
	var (
		stuckAfterRuns int
		dry            dryRunFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run each job on its own cron schedule and serve /metrics, /healthz and /readyz",
		Long: `Runs as a long-lived process: each job runs on its schedule from the
configuration (schedules.*), never overlapping itself or another job of this
process, and across pods only one run per landscape holds the lock. SIGTERM
stops scheduling and lets the running job finish (or cancels it after a grace
period, which leaves everything consistent).

/readyz answers 200 once the first full list of Gardener is held and the
schedules run. /healthz answers 503 once a job has completed no run, whatever
its outcome, for --stuck-after-runs of its scheduled times: the scheduler is
stuck, and the liveness probe restarts the pod.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stuckAfterRuns < 1 {
				return usageError{fmt.Errorf("--stuck-after-runs %d: want at least 1", stuckAfterRuns)}
			}
			srv, err := g.openServer(cmd.Context(), dry)
			if err != nil {
				return err
			}
			defer srv.Close()
			srv.StuckAfterRuns = stuckAfterRuns
			ln, err := listenOn(srv)
			if err != nil {
				return err
			}
			return srv.Serve(cmd.Context(), ln)
		},
	}
	cmd.Flags().StringVar(&g.overrides.listen, "listen", "", "address for /metrics, /healthz and /readyz (default metrics.listen, :8080)")
	cmd.Flags().IntVar(&stuckAfterRuns, "stuck-after-runs", app.DefaultStuckAfterRuns,
		"fail /healthz once a job completed no run for this many of its scheduled times")
	dry.register(cmd.Flags(), cmd.Name())
	return cmd
}

// openServer opens the job as serve runs it (app.OpenServer).
func (g *globals) openServer(ctx context.Context, dry dryRunFlags) (*app.Server, error) {
	needs := openForRun
	if dry.mode() == jobs.DryRunAll {
		needs = openForDryRun
	}
	s, err := g.inputs(needs)
	if err != nil {
		return nil, err
	}
	// serve runs every job, the candidates job on each change too.
	if err := dry.requireKEBPolicy(s.Config, jobs.AllJobs, "serve"); err != nil {
		return nil, err
	}
	return app.OpenServer(ctx, s, dry.mode())
}

// listenOn binds metrics.listen of the configuration, --listen when set.
func listenOn(srv *app.Server) (net.Listener, error) {
	listen := srv.Config.Metrics.Listen
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, usageError{fmt.Errorf("--listen %s: %w", listen, err)}
	}
	return ln, nil
}
