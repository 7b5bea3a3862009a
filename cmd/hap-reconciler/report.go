package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kyma-project/hap-reconciler/internal/report"
)

func reportCmd(g *globals) *cobra.Command {
	var (
		output *outputFlags
		ga     string
		live   bool
		shadow bool
	)
	cmd := &cobra.Command{
		Use:   cmdReport,
		Short: "Print, per GA and pool, every binding with its counts, limit, rank and drift",
		Long: `Reads the job's tables (the candidate table and open drift findings) and prints
them per GA and pool, with a line on how KEB's own picks compare with the
table's. With --live it gathers a fresh snapshot from Gardener and KEB's
database and decides on it, writing nothing. With --shadow it prints the
comparison of KEB's own picks with the table's answers instead: how many
agree, and every pick where they part, with both answers and why.`,
		Example: `  hap-reconciler report --ga 3e64ebae-38b5-46a0-b1ed-9ccee153a0ae
  hap-reconciler report --live -o json
  hap-reconciler report -o wide --no-headers
  hap-reconciler report --shadow --since 72h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			if shadow && live {
				return usageError{fmt.Errorf("--shadow reads the compared picks the job stored; it does not go with --live")}
			}
			env, err := g.openToRead(cmd.Context(), live)
			if err != nil {
				return err
			}
			defer env.Close()
			from := time.Now().Add(-env.Config.Jobs.Shadow.Window.Duration)
			if shadow {
				rep, err := report.Shadow(cmd.Context(), env.Reports, from)
				if err != nil {
					return err
				}
				return output.print(g.stdout, rep, rep.WriteTable)
			}
			rep, err := env.Reader.Report(cmd.Context(), ga, live, from)
			if err != nil {
				return err
			}
			return output.print(g.stdout, rep, rep.WriteTable)
		},
	}
	output = registerOutput(cmd, rowFormats...)
	cmd.Flags().StringVar(&ga, "ga", "", "only this global account")
	cmd.Flags().BoolVar(&live, "live", false, "compute a fresh snapshot instead of reading the job's tables; writes nothing")
	cmd.Flags().BoolVar(&shadow, "shadow", false, "print how KEB's own picks compare with the candidate table's answers, with every difference")
	cmd.Flags().DurationVar(&g.overrides.since, "since", 0, "how far back KEB's picks are counted (default: shadow.window of the configuration, 168h)")
	return cmd
}
