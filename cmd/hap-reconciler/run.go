package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/internal/redact"
)

func runCmd(g *globals) *cobra.Command {
	var (
		jobList string
		dry     dryRunFlags
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the jobs once (for the CronJob) and exit",
		Long: `Gathers the fleet once (every credentials binding and shoot of the namespace,
page by page, and the per-binding counts of KEB's database) and runs the
selected jobs on it. Exits 0 on success, also when another run holds the
landscape's lock (it then does nothing); 1 when a job failed; 2 on bad flags or
configuration, nothing run. A run that could not see the whole picture changes
nothing. A run that would write the candidate table with no multi-account
policy set (neither KEB's variables nor the file's block) is refused unless
--allow-no-keb-policy.`,
		Example: `  hap-reconciler run --config config.yaml --namespace garden-kyma-prod
  hap-reconciler run --jobs drift,candidates --dry-run
  hap-reconciler run --pushgateway-url http://pushgateway.monitoring:9091`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			selected, err := jobs.ParseJobs(jobList)
			if err != nil {
				return usageError{err}
			}
			return runOnce(cmd.Context(), g, selected, dry)
		},
	}
	cmd.Flags().StringVar(&jobList, "jobs", "", "comma-separated jobs to run: "+strings.Join(jobs.AllJobs, ",")+" (default all)")
	completeList(cmd, "jobs", jobs.AllJobs...)
	dry.register(cmd.Flags(), cmd.Name())
	cmd.Flags().StringVar(&g.overrides.pushgatewayURL, "pushgateway-url", "", "push the run's metrics to this Pushgateway (default metrics.pushgatewayURL)")
	return cmd
}

// runOnce opens the job as the run needs it, runs the selected jobs once
// and pushes the run's metrics.
func runOnce(ctx context.Context, g *globals, selected []string, dry dryRunFlags) error {
	needs := openForRun
	if dry.mode() == jobs.DryRunAll {
		// A dry run changes no table: it runs on a schema at this
		// release's version or not at all.
		needs = openForDryRun
	}
	s, err := g.inputs(needs)
	if err != nil {
		return err
	}
	if err := dry.requireKEBPolicy(s.Config, selected, "run"); err != nil {
		return err
	}
	env, err := app.Open(ctx, s, needs)
	if err != nil {
		return err
	}
	defer env.Close()
	err = env.Runner.Run(ctx, jobs.Options{Jobs: selected, DryRun: dry.mode()})
	if errors.Is(err, jobs.ErrLockHeld) {
		// No push either: this run's empty group would replace the
		// one the run holding the lock is about to push.
		env.Log.Info("another run holds this landscape's lock (PostgreSQL advisory lock); this run did nothing and exits successfully")
		return nil
	}
	switch url := env.Config.Metrics.PushgatewayURL; {
	case url != "" && dry.mode().WritesNothing():
		// The gateway's group is what the alerts read: a dry run's
		// success must not make a stale job look fresh.
		env.Log.Info("dry run: the run's metrics are not pushed", zap.String("pushgateway", redact.String(url)))
	case url != "":
		pushMetrics(ctx, env, url)
	}
	if err != nil {
		return fmt.Errorf("run failed: %w", err)
	}
	return nil
}

// pushMetrics pushes the run's metrics. Whatever goes wrong is logged: the
// run's work stands, and the next run pushes again.
func pushMetrics(ctx context.Context, env *environment, url string) {
	err := env.Metrics.Push(ctx, url, env.Config.Namespace)
	switch {
	case errors.Is(err, metrics.ErrNotCarried):
		env.Log.Warn("pushed the run's metrics, but could not read the previous group from the Pushgateway",
			zap.String("pushgateway", redact.String(url)), zap.Error(err))
	case err != nil:
		env.Log.Error("pushing metrics to the Pushgateway failed; the run's work stands",
			zap.String("pushgateway", redact.String(url)), zap.Error(err))
	}
}
