package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
)

// environment is the wired job a command works with.
type environment = app.Env

var (
	openForRun          = app.Needs{Gardener: true, Database: true, Migrate: true}
	openForDryRun       = app.Needs{Gardener: true, Database: true, CurrentSchema: true}
	openForLiveReport   = app.Needs{Gardener: true, Database: true}
	openForStoredReport = app.Needs{Database: true}
	openForMigrate      = app.Needs{Database: true, Migrate: true}
	openForMigrateDown  = app.Needs{Database: true}
)

// open loads the configuration, applies the flags, logs the configuration's
// warnings and the multi-account policy in effect, and wires what needs asks
// for.
func (g *globals) open(ctx context.Context, needs app.Needs) (*environment, error) {
	s, err := g.inputs(needs)
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, s, needs)
}

// inputs turns the flags, the configuration file and the environment
// into what app opens the job with, and logs the policy in effect.
func (g *globals) inputs(needs app.Needs) (app.Inputs, error) {
	return g.inputsLogging(needs, app.LogConfig)
}

// openSchema wires the job for migrate: the database alone, and no policy
// logged, since migrate decides nothing with it.
func (g *globals) openSchema(ctx context.Context, needs app.Needs) (*environment, error) {
	s, err := g.inputsLogging(needs, app.LogWarnings)
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, s, needs)
}

func (g *globals) inputsLogging(needs app.Needs, logConfig func(*zap.Logger, config.Config)) (app.Inputs, error) {
	cfg, err := g.load()
	if err != nil {
		return app.Inputs{}, err
	}
	log, err := g.logger()
	if err != nil {
		return app.Inputs{}, err
	}
	routeKlog(log)
	logConfig(log, cfg)
	s := app.Inputs{Config: cfg, Kubeconfig: g.kubeconfig, DatabaseURL: g.databaseURL, Getenv: g.getenv, Log: log}
	switch {
	case needs.Gardener && len(g.gardenerFiles) > 0:
		s.GardenerFiles = g.gardenerFiles
	case needs.Gardener:
		if err := g.requireNamespace(cfg); err != nil {
			return app.Inputs{}, err
		}
	}
	return s, nil
}

// openToRead wires the job for a command that reads: the job's stored
// tables, or with live a fresh snapshot of Gardener and KEB's database.
func (g *globals) openToRead(ctx context.Context, live bool) (*environment, error) {
	if live {
		return g.open(ctx, openForLiveReport)
	}
	return g.open(ctx, openForStoredReport)
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
	case "undo-release":
		return usageError{errors.New("--gardener-file: undo-release changes the binding in the Gardener API; an export cannot be changed")}
	case "run":
		return usageError{errors.New("--gardener-file: run writes the candidate table KEB provisions from and the release clocks, " +
			"and an export is a picture of the past; analyse it with report --live --gardener-file instead")}
	}
	return nil
}
