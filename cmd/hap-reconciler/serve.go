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
		listen string
		dry    dryRunFlags
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
			srv, err := g.openServer(cmd.Context(), dry)
			if err != nil {
				return err
			}
			defer srv.Close()
			ln, err := listenOn(srv, listen)
			if err != nil {
				return err
			}
			return srv.Serve(cmd.Context(), ln)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address for /metrics, /healthz and /readyz (default metrics.listen, :8080)")
	dry.register(cmd.Flags())
	return cmd
}

// openServer opens the job as serve runs it (app.OpenServer).
func (g *globals) openServer(ctx context.Context, dry dryRunFlags) (*app.Server, error) {
	s, err := g.settings(app.Needs{Gardener: true, Database: true, Migrate: true})
	if err != nil {
		return nil, err
	}
	// serve runs every job, the candidates job on each change too.
	if err := dry.requireKEBPolicy(s.Config, jobs.AllJobs, "serve"); err != nil {
		return nil, err
	}
	return app.OpenServer(ctx, s, dry.mode())
}

// listenOn binds --listen, else metrics.listen of the configuration.
func listenOn(srv *app.Server, listen string) (net.Listener, error) {
	if listen == "" {
		listen = srv.Config.Metrics.Listen
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, usageError{fmt.Errorf("--listen %s: %w", listen, err)}
	}
	return ln, nil
}
