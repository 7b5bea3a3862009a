// Package app wires hap-reconciler together: configuration, logger, the
// Gardener and PostgreSQL adapters and the jobs' runner. The CLI, the demo
// and the tests build the job the same way through it.
package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/internal/report"
)

// Needs says which parts a command uses.
type Needs struct {
	Gardener bool
	Database bool
	// Migrate applies the job's schema migrations after connecting.
	Migrate bool
}

// Settings are what the caller resolved from flags and the environment.
type Settings struct {
	Config config.Config
	// Kubeconfig is the --kubeconfig path; empty means KUBECONFIG, else
	// in-cluster. RESTConfig, when set, is used instead.
	Kubeconfig string
	RESTConfig *rest.Config
	// Gardener, when set, replaces the API client (an export file, say).
	Gardener jobs.Gardener
	// Watch, when set, answers the jobs' lists from watch caches of the
	// API (see Watch); serve uses it.
	Watch *Watch
	// DatabaseURL is the --database-url flag; empty falls back to the
	// environment (DATABASE_URL, then KEB's APP_DATABASE_*).
	DatabaseURL string
	Getenv      func(string) string
	Log         *zap.Logger
	Now         func() time.Time
}

// Env is a wired job, ready to run.
type Env struct {
	Config config.Config
	Runner *jobs.Runner
	Store  *db.Store
	// Reports reads the job's tables for a report, saying what to check
	// when they are missing.
	Reports report.Store
	Metrics *metrics.Metrics
	Log     *zap.Logger

	// watch is the watch Open started, if any.
	watch *watchedPort
}

// Open connects what needs asks for and returns the wired job.
func Open(ctx context.Context, s Settings, needs Needs) (*Env, error) {
	if s.Now == nil {
		s.Now = time.Now
	}
	env := &Env{Config: s.Config, Metrics: metrics.New(), Log: s.Log}
	env.Runner = &jobs.Runner{Config: s.Config, Ports: jobs.Ports{Metrics: env.Metrics, Log: s.Log, Now: s.Now}}
	if needs.Database {
		store, err := openStore(ctx, s, needs.Migrate)
		if err != nil {
			return nil, err
		}
		env.Store = store
		env.Reports = explainingReports{Store: store, schema: store.Schema()}
		env.Runner.Store, env.Runner.Locker = explainingStore{Store: store, schema: store.Schema()}, runLocker{store}
	}
	if needs.Gardener || s.Watch != nil {
		g, watch, err := openGardener(s)
		if err != nil {
			env.Close()
			return nil, err
		}
		env.Runner.Gardener, env.watch = g, watch
	}
	return env, nil
}

// Close releases the database connections.
func (e *Env) Close() {
	if e.Store != nil {
		if err := e.Store.Close(); err != nil {
			e.Log.Warn("closing the database", zap.Error(err))
		}
	}
}

func openStore(ctx context.Context, s Settings, migrate bool) (*db.Store, error) {
	url := s.DatabaseURL
	if url == "" {
		var err error
		if url, err = db.DSNFromEnv(s.Getenv); err != nil {
			return nil, err
		}
	}
	if url == "" {
		return nil, errors.New("no database: set --database-url, DATABASE_URL or KEB's APP_DATABASE_HOST, APP_DATABASE_USER, APP_DATABASE_PASSWORD, APP_DATABASE_NAME")
	}
	c := s.Config.Database
	store, err := db.Open(ctx, url, db.Options{
		Schema: c.Schema, ConnectTimeout: c.ConnectTimeout.Duration, StatementTimeout: c.StatementTimeout.Duration,
	})
	if err != nil {
		return nil, explainDatabaseOr(err, c.Schema, "cannot connect to KEB's database (check the URL, the credentials and that the server is reachable)")
	}
	if migrate {
		if err := store.Migrate(ctx); err != nil {
			_ = store.Close()
			return nil, explainDatabaseOr(err, c.Schema, fmt.Sprintf("migrating schema %q (the job's role must own it or be allowed to create it)", c.Schema))
		}
	}
	return store, nil
}

// openGardener chooses the job's Gardener source once (an export, the
// API, or the API watched) and wraps it once, in the port that explains
// failures.
func openGardener(s Settings) (jobs.Gardener, *watchedPort, error) {
	if s.Gardener != nil {
		if s.Watch != nil {
			return nil, nil, fmt.Errorf("watching needs the Gardener API, but this job reads Gardener from %T", s.Gardener)
		}
		return explainingGardener{Gardener: s.Gardener, namespace: s.Config.Namespace}, nil, nil
	}
	cfg := s.RESTConfig
	if cfg == nil {
		var err error
		if cfg, err = gardener.RESTConfig(s.Kubeconfig); err != nil {
			return nil, nil, fmt.Errorf("cannot reach Gardener: %w", err)
		}
	}
	c := s.Config.Gardener
	client, err := gardener.NewClient(cfg, s.Config.Namespace, c.PageSize, gardener.WithRequestTimeout(c.RequestTimeout.Duration))
	if err != nil {
		return nil, nil, err
	}
	live := &gardenerPort{client: client, log: s.Log}
	explain := explainingGardener{Gardener: live, namespace: s.Config.Namespace, host: cfg.Host}
	if s.Watch == nil {
		return explain, nil, nil
	}
	watched, err := watchGardener(live, s.Watch, s.Log)
	if err != nil {
		return nil, nil, err
	}
	explain.Gardener = watched
	return explain, watched, nil
}
