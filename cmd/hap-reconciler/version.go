package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func versionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(g.stdout, "hap-reconciler %s (%s)\n", version, runtime.Version())
			return err
		},
	}
}
