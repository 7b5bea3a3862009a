package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// environment is the wired job a command works with.
type environment = app.Env

var (
	openForRun          = app.Needs{Gardener: true, Database: true, Migrate: true}
	openForServe        = openForRun
	openForLiveReport   = app.Needs{Gardener: true, Database: true}
	openForStoredReport = app.Needs{Database: true}
	openForMigrate      = app.Needs{Database: true, Migrate: true}
)

// open loads the configuration, applies the flags, logs the configuration's
// warnings and the multi-account policy in effect, and wires what needs asks
// for.
func (g *globals) open(ctx context.Context, needs app.Needs) (*environment, error) {
	return g.openWatching(ctx, needs, nil)
}

// openWatching is open, with Gardener's lists answered from a watch when
// watch is set (serve).
func (g *globals) openWatching(ctx context.Context, needs app.Needs, watch *app.Watch) (*environment, error) {
	cfg, err := g.load()
	if err != nil {
		return nil, err
	}
	log, err := g.logger()
	if err != nil {
		return nil, err
	}
	routeKlog(log)
	app.LogConfig(log, cfg)
	var export jobs.Gardener
	switch {
	case needs.Gardener && len(g.gardenerFiles) > 0:
		files, err := gardener.OpenFiles(cfg.Namespace, g.gardenerFiles...)
		if err != nil {
			return nil, usageError{fmt.Errorf("--gardener-file: %w", err)}
		}
		if cfg.Namespace == "" {
			cfg.Namespace = files.Namespace()
		}
		shoots, bindings := files.Counts()
		log.Info("reading Gardener from export files, not from the API; nothing is written to Gardener",
			zap.Strings("files", g.gardenerFiles), zap.String("namespace", cfg.Namespace),
			zap.Int("shoots", shoots), zap.Int("credentialsBindings", bindings))
		export = files
	case needs.Gardener:
		if err := g.requireNamespace(cfg); err != nil {
			return nil, err
		}
	}
	env, err := app.Open(ctx, app.Settings{
		Config:      cfg,
		Kubeconfig:  g.kubeconfig,
		Gardener:    export,
		Watch:       watch,
		DatabaseURL: g.databaseURL,
		Getenv:      g.getenv,
		Log:         log,
	}, needs)
	if err != nil {
		return nil, err
	}
	return env, nil
}

// openToRead wires the job for a command that reads: the job's stored
// tables, or with live a fresh snapshot of Gardener and KEB's database.
func (g *globals) openToRead(ctx context.Context, live bool) (*environment, error) {
	if live {
		return g.open(ctx, openForLiveReport)
	}
	return g.open(ctx, openForStoredReport)
}

// checkOutput refuses an -o the reading commands do not print.
func checkOutput(output string) error {
	if output != "table" && output != "json" {
		return usageError{fmt.Errorf("-o: %q is not one of table, json", output)}
	}
	return nil
}

// checkGardenerFiles refuses, before anything runs, what an export must not
// do. An export is for analysis: its bindings cannot be relabelled, and it is
// a picture of the past, so nothing KEB provisions from may be computed from
// it; serving scheduled runs on it makes no sense either.
func (g *globals) checkGardenerFiles(cmd *cobra.Command) error {
	if len(g.gardenerFiles) == 0 {
		return nil
	}
	switch cmd.Name() {
	case "serve":
		return usageError{errors.New("--gardener-file: serve runs the jobs on schedules against the live Gardener API, and an export never changes; " +
			"use run --dry-run or report --live with an export")}
	case "report", "pools":
		if live, _ := cmd.Flags().GetBool("live"); !live {
			return usageError{fmt.Errorf("--gardener-file: %s reads the job's stored tables unless --live; add --live to decide on the export", cmd.Name())}
		}
	case "run":
		return usageError{errors.New("--gardener-file: run writes the candidate table KEB provisions from and the release clocks, " +
			"and an export is a picture of the past; analyse it with report --live --gardener-file instead")}
	}
	return nil
}
