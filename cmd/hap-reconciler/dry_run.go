package main

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// dryRunFlags are the flags of run and serve that say what a run leaves as
// it is, and whether it may write the candidate table without a policy.
type dryRunFlags struct {
	all, release  bool
	allowNoPolicy bool
}

// register adds the flags to run's or serve's flag set, each with the text
// that holds for that command: serve runs on schedules and pushes nothing.
func (f *dryRunFlags) register(fs *pflag.FlagSet, command string) {
	dryRun := "decide and log everything, write nothing at all: no binding, no table of the job's schema " +
		"(the candidate table and what KEB reads beside it, the drift history, shadow picks, pool history, release clocks and audit), no counter, no push. " +
		"run --dry-run applies no migration: on a schema not at this release's version it stops (exit 1)"
	release := "only the release is a dry run: it decides and audits would-releases and changes no binding; " +
		"every other job writes as usual, the candidate table included (the chart's release.dryRun)"
	if command == "serve" {
		dryRun = "every scheduled run decides and logs everything and writes nothing at all: no binding, no table of the job's schema " +
			"(the candidate table and what KEB reads beside it, the drift history, shadow picks, pool history, release clocks and audit). " +
			"serve --dry-run applies no migration: on a schema not at this release's version it does not start (exit 1)"
		release = "every scheduled release decides and audits would-releases and changes no binding; " +
			"the other jobs write as usual on their schedules, the candidate table included (the chart's release.dryRun)"
	}
	fs.BoolVar(&f.all, "dry-run", false, dryRun)
	fs.BoolVar(&f.release, "release-dry-run", false, release)
	fs.BoolVar(&f.allowNoPolicy, "allow-no-keb-policy", false, "write the candidate table even when no multi-account policy is set "+
		"(neither KEB's APP_HAP_MULTI_HYPERSCALER_ACCOUNT_* variables nor hap.multiHyperscalerAccount): as if KEB's feature were off")
}

// mode is what the flags leave as it is; --dry-run includes --release-dry-run.
func (f dryRunFlags) mode() jobs.DryRun {
	switch {
	case f.all:
		return jobs.DryRunAll
	case f.release:
		return jobs.DryRunRelease
	}
	return jobs.NoDryRun
}

// requireKEBPolicy refuses, before anything connects, a run of selected
// that would write the candidate table with no multi-account policy at all:
// on a workstation without KEB's variables the table would rank as if KEB's
// feature were off, and once KEB reads the table that changes its picks.
// `check` insists on KEB's variables for the same reason.
func (f dryRunFlags) requireKEBPolicy(cfg config.Config, selected []string, command string) error {
	if cfg.PolicySource != "" || f.allowNoPolicy || f.mode().KeepsKEBsTables() || !slices.Contains(selected, jobs.JobCandidates) {
		return nil
	}
	return usageError{fmt.Errorf("no multi-account policy is set (policy source none: neither KEB's APP_HAP_MULTI_HYPERSCALER_ACCOUNT_* variables "+
		"nor hap.multiHyperscalerAccount in --config), and %s would write the candidate table KEB provisions from as if KEB's feature were off: "+
		"set KEB's variables as KEB is deployed with them, add --dry-run to write nothing KEB reads, or pass --allow-no-keb-policy to write it anyway", command)}
}
