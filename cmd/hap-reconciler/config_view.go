package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/redact"
)

func configCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   cmdConfig,
		Short: "Show the configuration the job runs with",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(configViewCmd(g))
	return cmd
}

func configViewCmd(g *globals) *cobra.Command {
	var output *outputFlags
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Print the configuration as resolved, passwords hidden",
		Long: `Prints the configuration every command resolves before it runs: the file
(--config) over the defaults, KEB's variables from the environment (the
multi-account policy, the rule file, the trial provider), the flags that
override a key (--namespace), every job's settings and schedule, and where
the database URL comes from, with its password hidden. It connects to
nothing and changes nothing. The warnings every command logs at start are
listed under warnings.`,
		Example: `  hap-reconciler config view --config config.yaml
  hap-reconciler config view -o json | jq .hap.multiHyperscalerAccount`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			cfg, err := g.load()
			if err != nil {
				return err
			}
			view, err := resolvedView(cfg, app.Inputs{DatabaseURL: g.databaseURL, Getenv: g.getenv})
			if err != nil {
				return err
			}
			return writeData(g.stdout, output.format, view)
		},
	}
	output = registerOutput(cmd, outputYAML, outputJSON)
	return cmd
}

// resolvedView is the configuration as config view prints it: the file's
// keys as the job applies them, every job's section, and what came from
// elsewhere, with every string that may hold a password shown as
// internal/redact shows it.
func resolvedView(cfg config.Config, db app.Inputs) (map[string]any, error) {
	cfg.Metrics.PushgatewayURL = redact.String(cfg.Metrics.PushgatewayURL)
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	var view map[string]any
	if err := json.Unmarshal(js, &view); err != nil {
		return nil, err
	}
	sections, err := json.Marshal(cfg.Jobs.AsApplied())
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(sections, &view); err != nil {
		return nil, err
	}
	database, _ := view["database"].(map[string]any)
	if url, source, err := app.DatabaseURL(db); err != nil {
		database["url"], database["urlSource"] = "", fmt.Sprintf("none: %v", err)
	} else {
		database["url"], database["urlSource"] = url, source
	}
	warnings := make([]string, len(cfg.Warnings))
	for i, w := range cfg.Warnings {
		warnings[i] = w.String()
	}
	view["policySource"] = cfg.PolicySource
	view["ruleSource"] = cfg.RuleSource
	view["trialProvider"] = cfg.Providers.Trial
	view["warnings"] = warnings
	return view, nil
}
