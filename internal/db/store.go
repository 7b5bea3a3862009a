// Package db is the job's PostgreSQL adapter: it reads KEB's instances
// table, which it never writes, and keeps the job's own tables in a schema of
// its own (hap by default). The Store is the jobs' and the reports' port
// itself, and says what to check when PostgreSQL fails in a way an operator
// meets (explain.go).
package db

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/kyma-project/hap-reconciler/internal/redact"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// Defaults of Options.
const (
	defaultSchema           = schema.Default
	defaultConnectTimeout   = 10 * time.Second
	defaultStatementTimeout = 60 * time.Second
	defaultMaxOpenConns     = 4
)

// Options tune a Store. Zero values take the defaults above.
type Options struct {
	// Schema holds the job's tables.
	Schema           string
	ConnectTimeout   time.Duration
	StatementTimeout time.Duration
	// MaxOpenConns bounds the pool; the run lock keeps one connection for
	// the whole run, so fewer than two would starve everything else.
	MaxOpenConns int
}

// Store is an open database.
type Store struct {
	db     *gorm.DB
	sqlDB  *sql.DB
	schema string
	// connConfig is what sqlDB connects with; the migrator opens
	// connections of its own from a copy (migrate.go).
	connConfig *pgx.ConnConfig
	// statementTimeout also bounds the wait for the migration lock.
	statementTimeout time.Duration
	// secrets are the password's spellings, kept to scrub them from every
	// error this package returns.
	secrets []string
}

func (o Options) withDefaults() (Options, error) {
	if o.Schema == "" {
		o.Schema = defaultSchema
	}
	if err := schema.Check(o.Schema); err != nil {
		return o, err
	}
	durations := []struct {
		field string
		value *time.Duration
		def   time.Duration
	}{
		{"connect timeout", &o.ConnectTimeout, defaultConnectTimeout},
		{"statement timeout", &o.StatementTimeout, defaultStatementTimeout},
	}
	for _, d := range durations {
		if *d.value < 0 {
			return o, fmt.Errorf("%s %s: must not be negative", d.field, *d.value)
		}
		if *d.value == 0 {
			*d.value = d.def
		}
	}
	switch {
	case o.MaxOpenConns == 0:
		o.MaxOpenConns = defaultMaxOpenConns
	case o.MaxOpenConns < 2:
		return o, fmt.Errorf("max open connections %d: want at least 2", o.MaxOpenConns)
	}
	return o, nil
}

// Open connects to the database at dsn (URL or keyword/value form) and
// checks that it answers, saying what to check when it does not
// (explain.go). It neither creates nor migrates anything.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	s, err := open(ctx, dsn, opts)
	return s, explain(err, cmp.Or(opts.Schema, defaultSchema))
}

func open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg, secrets, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = opts.ConnectTimeout
	// A session setting, so it also bounds statements gorm builds.
	cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(opts.StatementTimeout.Milliseconds(), 10)
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "hap-reconciler"
	}
	sqlDB := openDB(*cfg)
	sqlDB.SetMaxOpenConns(opts.MaxOpenConns)
	sqlDB.SetMaxIdleConns(opts.MaxOpenConns)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, redact.Scrub(fmt.Errorf("connect to %s: %w", redact.String(dsn), err), secrets)
	}
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), &gorm.Config{
		// The job logs what matters itself; gorm's own lines would only
		// repeat statements, with their arguments.
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		DisableAutomaticPing:   true,
	})
	if err != nil {
		_ = sqlDB.Close()
		return nil, redact.Scrub(fmt.Errorf("set up gorm on %s: %w", redact.String(dsn), err), secrets)
	}
	return &Store{db: gdb, sqlDB: sqlDB, schema: opts.Schema, connConfig: cfg, statementTimeout: opts.StatementTimeout, secrets: secrets}, nil
}

// Close closes every connection.
func (s *Store) Close() error {
	return s.wrap("close database", s.sqlDB.Close())
}

// Schema is the schema holding the job's tables.
func (s *Store) Schema() string { return s.schema }

// wrap adds context to a driver error and removes any password from it.
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return redact.Scrub(fmt.Errorf("%s: %w", op, err), s.secrets)
}

// table qualifies one of the job's tables with its schema. The schema was
// validated as a plain identifier, so it needs no quoting.
func (s *Store) table(name string) string { return s.schema + "." + name }

// advisoryKey derives a lock key from the schema, so two deployments in
// separate schemas of one database do not exclude each other.
func (s *Store) advisoryKey(purpose string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("hap-reconciler/" + purpose + "/" + s.schema))
	return int64(h.Sum64())
}
