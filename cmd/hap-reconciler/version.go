package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// commit is set at build time with -ldflags "-X main.commit=..." where the
// build has no git metadata (a container build without .git); otherwise it
// is read from the build information Go stamps into the binary.
var commit = ""

// buildCommit is the commit the binary was built from: -X main.commit, else
// Go's vcs.revision (with "-dirty" when the tree had changes), else
// "unknown".
func buildCommit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision == "" {
		return "unknown"
	}
	if modified == "true" {
		revision += "-dirty"
	}
	return revision
}

// versionString is what --version and version print after the name.
func versionString() string {
	return fmt.Sprintf("%s (commit %s, %s)", version, buildCommit(), runtime.Version())
}

func versionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(g.stdout, "hap-reconciler %s\n", versionString())
			return err
		},
	}
}
