package main

import (
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

var openForCheck = app.Needs{Gardener: true, Database: true}

// checkLog is check's default output: its outcome as log lines on stdout,
// as the chart's helm test reads it.
const checkLog = "log"

// checkOutcome is what check -o json and -o yaml print.
type checkOutcome struct {
	Passed bool `json:"passed"`
	app.CheckResult
}

func checkCmd(g *globals) *cobra.Command {
	var output *outputFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check that the job can work here: KEB's database with the job's role, the project's bindings and shoots, KEB's policy",
		Long: `Connects as the job does and checks, writing nothing, in the order to fix them:
the Gardener project's credentials bindings and shoots can be listed with the
job's credentials; KEB's instances and the job's candidate table can be read
with the job's database role; the provisioning module KEB pins (kebModule.*)
reads the schema's version; the namespace lists the bindings KEB's database
places its active instances on (not none, not far fewer: a run would refuse
that picture); and the multi-account policy in effect comes from KEB's
variables (it is logged, as at every start). Exits 0 when all of that holds,
1 with one line naming every failure, the one to fix first first. The chart's
helm test runs it.

With -o json or -o yaml it prints the outcome on stdout (passed, every
failure in order, and what was counted), passed or not, and logs to stderr.`,
		Example: `  hap-reconciler check --config config.yaml
  hap-reconciler check -o json | jq -r '.failures[]'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			env, err := g.open(cmd.Context(), openForCheck)
			if err != nil {
				return err
			}
			defer env.Close()
			res, err := app.Check(cmd.Context(), env)
			if output.structured() {
				if werr := writeData(g.stdout, output.format, checkOutcome{Passed: err == nil, CheckResult: res}); werr != nil {
					return werr
				}
			}
			if err != nil {
				return err
			}
			env.Log.Info("check passed: the job can read KEB's database with its role and list the project's bindings and shoots",
				zap.String("namespace", res.Namespace),
				zap.Int("bindingsWithActiveInstances", res.BindingsWithInstances),
				zap.Int("candidateRows", res.CandidateRows),
				zap.Int("bindings", res.Bindings),
				zap.Bool("shootsListed", res.FirstShoot),
				zap.String("policySource", res.PolicySource),
				zap.String("limitsAndGuard", res.LimitsAndGuard),
				zap.String("kebModule", res.KEBModule),
				zap.Bool("kebIndexForTheReadPath", res.KEBIndex))
			if !res.KEBIndex {
				env.Log.Warn("KEB's instances table lacks the index the read path counts through, or holds it INVALID: add schema.KEBIndexUp "+
					"to KEB's migrations before KEB reads the candidate table, or, after a build that failed, drop the invalid index and run the migration again; "+
					"until then every pick goes to KEB's live path (docs/keb-adoption.md)",
					zap.String("index", schema.KEBIndexName))
			}
			return nil
		},
	}
	output = registerOutput(cmd, checkLog, outputJSON, outputYAML)
	return cmd
}
