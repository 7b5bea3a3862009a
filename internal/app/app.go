// Package app wires hap-reconciler together: configuration, logger, the
// Gardener and PostgreSQL adapters and the jobs' runner. The CLI, the demo
// and the tests build the job the same way through it.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/gardener/exportfile"
	"github.com/kyma-project/hap-reconciler/internal/hint"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/internal/redact"
	"github.com/kyma-project/hap-reconciler/internal/report"
)

// Needs says which parts a command uses.
type Needs struct {
	Gardener bool
	Database bool
	// Migrate applies the job's schema migrations after connecting.
	Migrate bool
	// CurrentSchema, without Migrate, refuses a schema that is not at this
	// release's version instead of migrating it (a dry run changes no
	// table).
	CurrentSchema bool
}

// Inputs are what the caller resolved from flags and the environment: the
// configuration as loaded (config.LoadWithEnv, resolved) with the flags
// that override it applied, and where to reach Gardener and the database.
type Inputs struct {
	Config config.Config
	// Kubeconfig is the --kubeconfig path; empty means KUBECONFIG, else
	// in-cluster. RESTConfig, when set, is used instead.
	Kubeconfig string
	RESTConfig *rest.Config
	// GardenerFiles, when set, replace the Gardener API with kubectl
	// exports (--gardener-file); nothing is written to Gardener then.
	GardenerFiles []string
	// Gardener, when set, replaces the API client (a test's fake, say). It
	// is used as given: what to check when it fails is its own to say, as
	// the API client says it.
	Gardener jobs.Gardener
	// Watch, when set, answers the jobs' lists from watch caches of the
	// API (see Watch); serve uses it.
	Watch *Watch
	// CandidatesWritten, when set, hears of every rewrite of the candidate
	// table once it committed, with the time of the snapshot it came from;
	// serve's proofs of how far the table has seen Gardener use it.
	CandidatesWritten func(computedAt time.Time)
	// DatabaseURL is the --database-url flag; empty falls back to the
	// environment (DATABASE_URL, then KEB's APP_DATABASE_*).
	DatabaseURL string
	Getenv      func(string) string
	Log         *zap.Logger
	Now         func() time.Time
}

// Env is a wired job, ready to run.
type Env struct {
	// Config is the configuration as resolved when it was loaded; its Jobs
	// are what the jobs apply (KEB's policy and rules, each job's own
	// settings, the schedules).
	Config config.Config
	Runner *jobs.Runner
	Store  *db.Store
	// Reports reads the job's tables for a report, saying what to check
	// when they are missing.
	Reports report.Store
	// Reader is the read side of `report` and `pools`, stored and live.
	Reader  report.Reader
	Metrics *metrics.Metrics
	Log     *zap.Logger

	// gardener is the Gardener API the runner reads, when it reads the API
	// (not export files): its watch, and its reload when the kubeconfig
	// file changes.
	gardener *apiGardener
}

// Open connects what needs asks for and returns the job wired with the
// configuration as it was resolved when loaded (s.Config).
func Open(ctx context.Context, s Inputs, needs Needs) (*Env, error) {
	if !s.Config.Resolved() {
		// KEB's policy and rules would be those of the configuration
		// before it was parsed.
		return nil, errors.New("the configuration was parsed but not resolved: call its Resolve before opening the job")
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	s, kubeconfig, err := loadKubeconfig(s, needs)
	if err != nil {
		return nil, err
	}
	env := &Env{Config: s.Config, Metrics: metrics.New(), Log: s.Log}
	ports := jobs.Ports{Metrics: env.Metrics, Log: s.Log, Now: s.Now}
	var locker jobs.Locker
	if needs.Database {
		store, err := openStore(ctx, s, needs)
		if err != nil {
			return nil, err
		}
		env.Store, env.Reports = store, store
		noteKEBModule(ctx, env, s.Config.KEBModule)
		ports.Store, locker = store, runLocker{store}
		if s.CandidatesWritten != nil {
			ports.Store = rewriteNotingStore{Store: store, written: s.CandidatesWritten}
		}
	}
	if needs.Gardener || s.Watch != nil {
		source, err := openGardener(s)
		if err != nil {
			env.Close()
			return nil, err
		}
		ports.Gardener, ports.Namespace = source.port, source.namespace
		env.Config.Namespace = source.namespace
		if source.live != nil {
			env.gardener = newAPIGardener(source, kubeconfig, func(cfg *rest.Config) (gardenerSource, error) {
				again := s
				again.RESTConfig = cfg
				return openGardener(again)
			}, s.Log)
			ports.Gardener = env.gardener
		}
	}
	env.Runner = jobs.NewRunner(s.Config.Jobs, ports, locker)
	env.Reader = report.Reader{Tables: env.Reports, Snapshot: env.Runner, Rules: s.Config.Rules(), Now: s.Now, Log: s.Log}
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

// MigrationsMessage is the message of the line that names the migrations
// a start applied (none logged when there were none).
const MigrationsMessage = "applied migrations"

func openStore(ctx context.Context, s Inputs, needs Needs) (*db.Store, error) {
	url, source, err := databaseURL(s)
	if err != nil {
		return nil, err
	}
	c := s.Config.Database
	store, err := db.Open(ctx, url, db.Options{
		Schema: c.Schema, ConnectTimeout: c.ConnectTimeout.Duration, StatementTimeout: c.StatementTimeout.Duration,
	})
	var badURL *db.URLError
	if errors.As(err, &badURL) {
		return nil, &InputError{Flag: source, Err: err}
	}
	if err != nil {
		return nil, orSaying(err, "cannot connect to KEB's database (check the URL, the credentials and that the server is reachable)")
	}
	switch {
	case needs.Migrate:
		if err := refusePastKEBModule(s.Config.KEBModule); err != nil {
			_ = store.Close()
			return nil, err
		}
		applied, err := store.MigrateUp(ctx)
		if err != nil {
			_ = store.Close()
			return nil, orSaying(err, fmt.Sprintf("migrating schema %q (the job's role must own it or be allowed to create it)", c.Schema))
		}
		if len(applied) > 0 {
			s.Log.Info(MigrationsMessage, zap.String("schema", c.Schema), zap.Stringers("migrations", applied))
		}
	case needs.CurrentSchema:
		if err := store.RequireCurrentSchema(ctx); err != nil {
			_ = store.Close()
			return nil, orSaying(err, "a dry run applies no migration: run `hap-reconciler migrate` first")
		}
	}
	return store, nil
}

// orSaying returns err as it is when it says what to check (the Store
// explains the failures it recognises), and otherwise with what the
// command was doing.
func orSaying(err error, what string) error {
	if hint.Has(err) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// DatabaseURL is databaseURL for showing: the connection string with its
// password hidden (redact.String) and what set it.
func DatabaseURL(s Inputs) (shown, source string, err error) {
	url, source, err := databaseURL(s)
	return redact.String(url), source, err
}

// databaseURL returns the connection string and what set it: the flag,
// else DATABASE_URL, else KEB's APP_DATABASE_* variables. What they lack or
// get wrong is the caller's to correct: an InputError.
func databaseURL(s Inputs) (url, source string, err error) {
	if s.DatabaseURL != "" {
		return s.DatabaseURL, "--database-url", nil
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if url, err = db.DSNFromEnv(getenv); err != nil {
		// The message names the variables.
		return "", "", &InputError{Err: err}
	}
	if strings.TrimSpace(getenv("DATABASE_URL")) != "" {
		return url, "DATABASE_URL", nil
	}
	return url, "APP_DATABASE_*", nil
}

// loadKubeconfig reads the kubeconfig when the job will ask the Gardener
// API, before anything connects: a kubeconfig that cannot be read, or none
// outside a cluster, is the caller's to correct, whatever else would fail.
// It returns the file as read, for apiGardener.Reload; none when the
// config was given or comes from the cluster.
func loadKubeconfig(s Inputs, needs Needs) (Inputs, *kubeconfigFile, error) {
	readsAPI := (needs.Gardener || s.Watch != nil) && s.Gardener == nil && len(s.GardenerFiles) == 0
	if !readsAPI || s.RESTConfig != nil {
		return s, nil, nil
	}
	// The content is read before the config: should it change in
	// between, the next reload sees a difference and loads it again. The
	// loader's error says more, so it goes first.
	fingerprint, readErr := gardener.KubeconfigFingerprint(s.Kubeconfig)
	cfg, err := gardener.RESTConfig(s.Kubeconfig)
	if err = cmp.Or(err, readErr); err != nil {
		return s, nil, &InputError{Flag: "--kubeconfig", Err: err}
	}
	s.RESTConfig = cfg
	if fingerprint == "" {
		return s, nil, nil
	}
	return s, &kubeconfigFile{path: s.Kubeconfig, fingerprint: fingerprint, seen: fingerprint}, nil
}

// gardenerSource is where the jobs read Gardener from, and the namespace;
// live is the API client when the source is the API.
type gardenerSource struct {
	port      jobs.Gardener
	live      *gardener.Client
	watch     *watching
	namespace string
}

// openGardener chooses the job's Gardener source once (export files, the
// API, or the API watched). Each source is the jobs' port itself and says
// what to check when it fails. This is the one place that decides where
// Gardener is read.
func openGardener(s Inputs) (gardenerSource, error) {
	namespace := s.Config.Namespace
	if s.Watch != nil && (s.Gardener != nil || len(s.GardenerFiles) > 0) {
		return gardenerSource{}, errors.New("watching needs the Gardener API, but this job reads Gardener from elsewhere")
	}
	switch {
	case s.Gardener != nil:
		return gardenerSource{port: s.Gardener, namespace: namespace}, nil
	case len(s.GardenerFiles) > 0:
		files, namespace, err := openExports(s)
		if err != nil {
			return gardenerSource{}, err
		}
		return gardenerSource{port: files, namespace: namespace}, nil
	}
	c := s.Config.Gardener
	client, err := gardener.NewClient(s.RESTConfig, namespace, c.PageSize,
		gardener.WithRequestTimeout(c.RequestTimeout.Duration), gardener.WithLog(s.Log))
	if err != nil {
		return gardenerSource{}, err
	}
	if s.Watch == nil {
		return gardenerSource{port: client, live: client, namespace: namespace}, nil
	}
	watched, err := watchGardener(client, s.Watch, s.Log)
	if err != nil {
		return gardenerSource{}, err
	}
	return gardenerSource{port: watched.watcher, live: client, watch: watched, namespace: namespace}, nil
}

// openExports reads the export files and says so in the log: a job that
// reads the past must not be mistaken for one that reads the API. The
// namespace is the configuration's (--namespace applied), else the
// exports' own.
func openExports(s Inputs) (files *exportfile.Source, namespace string, err error) {
	files, err = exportfile.Open(s.Config.Namespace, s.GardenerFiles...)
	if err != nil {
		return nil, "", &InputError{Flag: "--gardener-file", Err: err}
	}
	namespace = cmp.Or(s.Config.Namespace, files.Namespace())
	shoots, bindings := files.Counts()
	s.Log.Info("reading Gardener from export files, not from the API; nothing is written to Gardener",
		zap.Strings("files", s.GardenerFiles), zap.String("namespace", namespace),
		zap.Int("shoots", shoots), zap.Int("credentialsBindings", bindings))
	return files, namespace, nil
}

// InputError is a bad value the caller gave (a flag's file, a variable of
// the environment, say), as opposed to a failure of a system: the CLI exits
// with its usage code.
type InputError struct {
	// Flag names the flag or variable; empty when Err names it itself.
	Flag string
	Err  error
}

func (e *InputError) Error() string {
	if e.Flag == "" {
		return e.Err.Error()
	}
	return e.Flag + ": " + e.Err.Error()
}
func (e *InputError) Unwrap() error { return e.Err }
