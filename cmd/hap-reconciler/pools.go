package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
	"github.com/kyma-project/hap-reconciler/internal/report"
)

func poolsCmd(g *globals) *cobra.Command {
	var (
		output                                  *outputFlags
		live                                    bool
		plan, platformRegion, hyperscalerRegion string
		provider                                string
	)
	cmd := &cobra.Command{
		Use:   cmdPools,
		Short: "Print every pool hap.rule names with its bindings, clusters and days until it runs out",
		Long:  poolsHelp,
		Example: `  hap-reconciler pools --live
  hap-reconciler pools -o json
  hap-reconciler pools -o yaml
  hap-reconciler pools --plan aws --platform-region cf-eu11 --hyperscaler-region eu-central-1
  hap-reconciler pools --plan trial --provider gcp --platform-region cf-eu10 --hyperscaler-region europe-west3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			if plan != "" {
				return g.evaluateRules(output, runtimeQuery{plan: plan, provider: provider, platformRegion: platformRegion, hyperscalerRegion: hyperscalerRegion})
			}
			return g.printPools(cmd.Context(), output, live)
		},
	}
	output = registerOutput(cmd, rowFormats...)
	cmd.Flags().BoolVar(&live, "live", false, "compute the pools from a fresh snapshot instead of the recorded history; writes nothing")
	cmd.Flags().StringVar(&plan, "plan", "", "evaluate the rules for a runtime of this plan (aws, azure, gcp, sap-converged-cloud, trial, ...)")
	cmd.Flags().StringVar(&platformRegion, "platform-region", "", "with --plan: the runtime's platform region (cf-eu11, ...)")
	cmd.Flags().StringVar(&hyperscalerRegion, "hyperscaler-region", "", "with --plan: the runtime's hyperscaler region (eu-central-1, ...)")
	cmd.Flags().StringVar(&provider, "provider", "", "with --plan: the runtime's provider (aws, azure, gcp, ...); trial: the request's provider, else KEB's default; free: else the platform region's")
	return cmd
}

// poolsHelp is the long help of `pools`.
const poolsHelp = `Prints one row per pool the rules in hap.rule name (a rule that appends a
region it does not fix expands to the pools that exist) and per pool bindings
exist for: the rules that lead there, free, claimed, dirty and shared bindings,
clusters, global accounts about to claim another binding, and the days until
the pool runs out at the claim rate of the recorded runs.

Without --live it reads the pool history the job records (free and claimed
bindings per run); with --live it gathers a fresh snapshot (or reads
--gardener-file) and writes nothing.

With --plan it evaluates the rules for one runtime instead: the rule KEB
applies and the pool it draws from. That needs the configuration only. The
pool's base is the provider KEB gives the runtime: the plan's own; for trial
--provider, else KEB's default trial provider
(APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER, else Azure); for free
--provider, else the platform region's, as KEB derives it from the region's
first digit. A provider KEB would not give the runtime is refused.`

// printPools prints every pool, from the recorded history or, live, from a
// fresh snapshot.
func (g *globals) printPools(ctx context.Context, output *outputFlags, live bool) error {
	env, err := g.openToRead(ctx, live)
	if err != nil {
		return err
	}
	defer env.Close()
	rows, err := env.Reader.Pools(ctx, live)
	if err != nil {
		return err
	}
	return output.print(g.stdout, rows, func(w io.Writer, l report.Layout) error { return report.WritePoolsTable(w, rows, l) })
}

// ruleEvaluation is what `pools --plan` prints.
type ruleEvaluation struct {
	Plan              string `json:"plan"`
	PlatformRegion    string `json:"platformRegion"`
	HyperscalerRegion string `json:"hyperscalerRegion"`
	ProviderType      string `json:"providerType"`
	Rule              string `json:"rule"`
	HyperscalerType   string `json:"hyperscalerType"`
	EUAccess          bool   `json:"euAccess"`
	Shared            bool   `json:"shared"`
}

// runtimeQuery is the runtime `pools --plan` asks about, as the flags give it.
type runtimeQuery struct {
	plan, provider, platformRegion, hyperscalerRegion string
}

func (g *globals) evaluateRules(output *outputFlags, q runtimeQuery) error {
	cfg, err := g.load()
	if err != nil {
		return err
	}
	log, err := g.logger()
	if err != nil {
		return err
	}
	app.LogConfig(log, cfg) // the rules' warnings too: an entry with "*", a plan newer than the job
	rs := cfg.Rules()
	if len(cfg.HAP.Rule) == 0 {
		return usageError{errors.New("--plan: no rules to evaluate: set hap.rule in --config or " + "APP_HAP_RULE_FILE_PATH")}
	}
	providerType, err := cfg.Providers.ProviderType(q.plan, q.provider, q.platformRegion)
	if err != nil {
		return usageError{providerRefused(err)}
	}
	got, ok := rs.MatchProvider(q.plan, providerType, q.platformRegion, q.hyperscalerRegion)
	if !ok {
		return fmt.Errorf("no rule of hap.rule applies to plan %q on %s, platform region %q, hyperscaler region %q: KEB fails such a provisioning",
			q.plan, providerType, q.platformRegion, q.hyperscalerRegion)
	}
	ev := ruleEvaluation{Plan: q.plan, PlatformRegion: q.platformRegion, HyperscalerRegion: q.hyperscalerRegion, ProviderType: providerType,
		Rule: got.Rule, HyperscalerType: got.Pool.HyperscalerType, EUAccess: got.Pool.EUAccess, Shared: got.Shared}
	if output.structured() {
		return writeData(g.stdout, output.format, ev)
	}
	fmt.Fprintf(g.stdout, "provider:         %s\nrule:             %s\nhyperscalerType:  %s\neuAccess:         %t\nshared:           %t\n",
		ev.ProviderType, ev.Rule, ev.HyperscalerType, ev.EUAccess, ev.Shared)
	return nil
}

// providerRefused names the flag (or KEB's variable) whose value KEB would
// give the runtime no provider for.
func providerRefused(err error) error {
	var pe *rules.ProviderError
	if !errors.As(err, &pe) {
		return err
	}
	source := map[string]string{
		rules.FromRequest:        "--provider",
		rules.FromPlatformRegion: "--platform-region",
		rules.FromTrialDefault:   config.TrialProviderEnv,
		rules.FromPlan:           "--plan",
	}[pe.Input]
	switch {
	case pe.Input == rules.FromPlan:
		return fmt.Errorf("%s %q: %s", source, pe.Value, pe.Reason)
	case pe.Value == "":
		return fmt.Errorf("%s: plan %q: %s", source, pe.Plan, pe.Reason)
	}
	return fmt.Errorf("%s %q: plan %q: %s", source, pe.Value, pe.Plan, pe.Reason)
}
