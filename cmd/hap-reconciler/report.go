package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kyma-project/hap-reconciler/jobs"
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
			if output != "table" && output != "json" {
				return usageError{fmt.Errorf("-o: %q is not one of table, json", output)}
			}
			mode := openForStoredReport
			if live {
				mode = openForLiveReport
			}
			env, err := g.open(cmd.Context(), mode)
			if err != nil {
				return err
			}
			defer env.Close()
			var rep jobs.Report
			if live {
				rep, err = env.Runner.LiveReport(cmd.Context(), ga)
			} else {
				rep, err = jobs.StoredReport(cmd.Context(), env.Store, ga)
			}
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return writeReportTable(g.stdout, rep)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	cmd.Flags().StringVar(&ga, "ga", "", "only this global account")
	cmd.Flags().BoolVar(&live, "live", false, "compute a fresh snapshot instead of reading the job's tables; writes nothing")
	return cmd
}

func writeReportTable(out io.Writer, rep jobs.Report) error {
	fmt.Fprintf(out, "Candidate table (%s, computed %s)\n\n", rep.Source, rep.ComputedAt.UTC().Format(time.RFC3339))
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GLOBAL ACCOUNT\tPOOL\tNEXT\tBINDING\tRANK\tDB\tSHOOTS\tLIMIT\tHEADROOM\tSELECTABLE\tDRIFT")
	for _, g := range rep.Groups {
		ga := g.GlobalAccountID
		if ga == "" {
			ga = "(shared)"
		}
		pool := g.HyperscalerType
		if g.EUAccess {
			pool += " (eu)"
		}
		next := g.Next
		if g.ClaimNew {
			next = "CLAIM NEW"
		}
		for i, r := range g.Rows {
			if i > 0 {
				ga, pool, next = "", "", ""
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%t\t%s\n", ga, pool, next, r.Binding, r.Rank,
				r.DBCount, r.ShootCount, optional(r.Limit), optional(r.Headroom), r.Selectable, dash(strings.Join(r.Drift, ",")))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(rep.Other) == 0 {
		return nil
	}
	fmt.Fprintf(out, "\nDrift on bindings that are no candidates\n\n")
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "BINDING\tKIND\tGLOBAL ACCOUNT\tDB\tSHOOTS\tDETAIL")
	for _, f := range rep.Other {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\n", f.BindingName, f.Kind, dash(f.GlobalAccountID), f.DBCount, f.ShootCount, f.Detail)
	}
	return w.Flush()
}

func optional(v *int) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(*v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
