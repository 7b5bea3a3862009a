package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// completeValues offers values as the shell completion of flag's value.
func completeValues(cmd *cobra.Command, flag string, values ...string) {
	fn := func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	if err := cmd.RegisterFlagCompletionFunc(flag, fn); err != nil {
		panic(err) // a flag name misspelt here
	}
}

// completeList completes a comma-separated list of values (run --jobs): what
// is typed after the last comma is completed, the values already listed are
// not offered again.
func completeList(cmd *cobra.Command, flag string, values ...string) {
	fn := func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, prefix := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, prefix = toComplete[:i+1], toComplete[i+1:]
		}
		listed := map[string]bool{}
		for _, v := range strings.Split(done, ",") {
			listed[v] = true
		}
		var out []string
		for _, v := range values {
			if !listed[v] && strings.HasPrefix(v, prefix) {
				out = append(out, done+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	if err := cmd.RegisterFlagCompletionFunc(flag, fn); err != nil {
		panic(err)
	}
}
