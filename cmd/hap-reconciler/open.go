package main

import (
	"context"

	"github.com/kyma-project/hap-reconciler/app"
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

// open loads the configuration, applies the flags, and wires what needs
// asks for.
func (g *globals) open(ctx context.Context, needs app.Needs) (*environment, error) {
	cfg, err := g.load()
	if err != nil {
		return nil, err
	}
	if needs.Gardener {
		if err := g.requireNamespace(cfg); err != nil {
			return nil, err
		}
	}
	log, err := g.logger()
	if err != nil {
		return nil, err
	}
	env, err := app.Open(ctx, app.Settings{
		Config:      cfg,
		Kubeconfig:  g.kubeconfig,
		DatabaseURL: g.databaseURL,
		Getenv:      g.getenv,
		Log:         log,
	}, needs)
	if err != nil {
		return nil, err
	}
	return env, nil
}
