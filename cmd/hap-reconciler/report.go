package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/kyma-project/hap-reconciler/internal/report"
)

func reportCmd(g *globals) *cobra.Command {
	var (
		output string
		ga     string
		live   bool
	)
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Print, per GA and pool, every binding with its counts, limit, rank and drift",
		Long: `Reads the job's tables (the candidate table and open drift findings) and prints
them per GA and pool. With --live it gathers a fresh snapshot from Gardener and
KEB's database and decides on it, writing nothing.`,
		Example: `  hap-reconciler report --ga 3e64ebae-38b5-46a0-b1ed-9ccee153a0ae
  hap-reconciler report --live -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			env, err := g.openToRead(cmd.Context(), live)
			if err != nil {
				return err
			}
			defer env.Close()
			var rep report.Report
			if live {
				rep, err = report.Live(cmd.Context(), env.Runner, ga)
			} else {
				rep, err = report.Stored(cmd.Context(), env.Reports, ga)
			}
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return rep.WriteTable(g.stdout)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	cmd.Flags().StringVar(&ga, "ga", "", "only this global account")
	cmd.Flags().BoolVar(&live, "live", false, "compute a fresh snapshot instead of reading the job's tables; writes nothing")
	return cmd
}
