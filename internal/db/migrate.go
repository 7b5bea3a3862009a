package db

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"gorm.io/gorm"
)

// The job's migrations are golang-migrate's, as KEB's own
// (cmd/schemamigrator): NNNN_what.up.sql and NNNN_what.down.sql, embedded.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationsTable is where golang-migrate records the schema's version, in
// the job's schema. KEB's golang-migrate keeps public.schema_migrations;
// this name differs in table and schema, so the two records, and the two
// advisory locks golang-migrate derives from database, schema and table,
// never meet.
const migrationsTable = "hap_reconciler_migrations"

// Migration is one versioned step of the job's schema.
type Migration struct {
	Version uint
	Name    string
}

func (m Migration) String() string { return fmt.Sprintf("%d_%s", m.Version, m.Name) }

// migrations lists the embedded migrations in version order. Each must
// have its up and its down file: golang-migrate skips a name it cannot
// parse, so a misnamed file is refused here instead of never running.
func migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	directions := map[Migration][]source.Direction{}
	for _, e := range entries {
		m, err := source.Parse(e.Name())
		if err != nil || m.Version == 0 {
			return nil, fmt.Errorf("migration file %s: want N_name.up.sql or N_name.down.sql, N from 1", e.Name())
		}
		key := Migration{Version: m.Version, Name: m.Identifier}
		directions[key] = append(directions[key], m.Direction)
	}
	var all []Migration
	for m, dirs := range directions {
		if len(dirs) != 2 || !slices.Contains(dirs, source.Up) || !slices.Contains(dirs, source.Down) {
			return nil, fmt.Errorf("migration %s: want one up and one down file, found %v", m, dirs)
		}
		all = append(all, m)
	}
	slices.SortFunc(all, func(a, b Migration) int { return int(a.Version) - int(b.Version) })
	for i := 1; i < len(all); i++ {
		if all[i].Version == all[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", all[i-1], all[i], all[i].Version)
		}
	}
	return all, nil
}

// between returns the migrations after from up to and including to.
func between(all []Migration, from, to uint) []Migration {
	var out []Migration
	for _, m := range all {
		if m.Version > from && m.Version <= to {
			out = append(out, m)
		}
	}
	return out
}

// Migrate brings the job's schema to the newest version; see MigrateUp.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.MigrateUp(ctx)
	return err
}

// MigrateUp brings the job's schema to the newest version and returns the
// migrations it applied, oldest first. A schema already at the newest
// version is only read, without even the migration lock: a role without
// DDL rights (the job's runtime role, when the schema owner migrates in a
// step of its own) passes. Otherwise golang-migrate applies what is
// missing under its advisory lock, so concurrent callers (two pods starting
// at once) are serialised and the second finds nothing left to do. Each
// migration runs as one statement batch, hence in one transaction; one that
// fails leaves the schema at the version before it, marked dirty, and later
// calls refuse until an operator clears it (docs/deployment.md).
func (s *Store) MigrateUp(ctx context.Context) (_ []Migration, err error) {
	defer func() { err = explain(err, s.schema) }()
	all, err := migrations()
	if err != nil {
		return nil, err
	}
	if v, err := s.SchemaVersion(ctx); err == nil && v.Current() {
		return nil, nil
	}
	var applied []Migration
	err = s.withMigrator(ctx, true, func(m *migrate.Migrate, drv *recordingDriver) error {
		if err := s.takeOverLegacy(ctx, drv, all); err != nil {
			return err
		}
		err := m.Up()
		for _, v := range drv.clean {
			applied = append(applied, between(all, uint(v)-1, uint(v))...) // the migration of version v
		}
		if errors.Is(err, migrate.ErrNoChange) {
			return nil
		}
		return err
	})
	return applied, s.wrap("migrate schema "+s.schema, s.explainMigrateError(err))
}

// MigrateDown reverts the newest steps migrations and returns them, newest
// first. It refuses more steps than are applied, before changing anything.
func (s *Store) MigrateDown(ctx context.Context, steps int) ([]Migration, error) {
	all, err := migrations()
	if err != nil {
		return nil, err
	}
	if steps < 1 {
		return nil, fmt.Errorf("migrate down %d: want at least one step", steps)
	}
	var reverted []Migration
	err = s.withMigrator(ctx, false, func(m *migrate.Migrate, drv *recordingDriver) error {
		from, err := version(drv)
		if err != nil {
			return err
		}
		if applied := between(all, 0, from); steps > len(applied) {
			return fmt.Errorf("migrate down %d: the schema is at version %d, %d migrations applied", steps, from, len(applied))
		}
		err = m.Steps(-steps)
		// Each down step records the version below the migration it
		// reverted.
		for _, target := range drv.clean {
			if i := slices.IndexFunc(all, func(m Migration) bool { return int(m.Version) > target }); i >= 0 {
				reverted = append(reverted, all[i])
			}
		}
		return err
	})
	return reverted, s.wrap("migrate schema "+s.schema+" down", s.explainMigrateError(err))
}

// recordingDriver is golang-migrate's driver, noting every version it
// records as clean: golang-migrate records one after each migration it
// ran, under its lock, so these are exactly the migrations this call ran,
// whatever another pod did before.
type recordingDriver struct {
	database.Driver
	clean []int
}

func (d *recordingDriver) SetVersion(version int, dirty bool) error {
	if err := d.Driver.SetVersion(version, dirty); err != nil {
		return err
	}
	if !dirty {
		d.clean = append(d.clean, version)
	}
	return nil
}

// explainMigrateError makes golang-migrate's database errors unwrap to the
// driver's (so callers see PostgreSQL's code, permission denied say), drops
// the statement text they carry, and adds to its refusal of a dirty schema
// what an operator does about it.
func (s *Store) explainMigrateError(err error) error {
	var dirty migrate.ErrDirty
	if errors.As(err, &dirty) {
		return fmt.Errorf("%w: migration %d failed part-way; it ran in one transaction, so the schema is as the migration before it left it: "+
			"fix the cause, then record that version with UPDATE %s SET version = <the version before>, dirty = false (docs/deployment.md)",
			err, dirty.Version, s.table(migrationsTable))
	}
	var value database.Error
	var pointer *database.Error
	switch {
	case errors.As(err, &pointer):
		value = *pointer
	case !errors.As(err, &value):
		return err
	}
	if value.Err == "" {
		return value.OrigErr
	}
	return fmt.Errorf("%s (line %d): %w", value.Err, value.Line, value.OrigErr)
}

// version is the version the migrations table records, 0 for none.
func version(drv database.Driver) (uint, error) {
	v, dirty, err := drv.Version()
	switch {
	case err != nil:
		return 0, err
	case dirty:
		return 0, migrate.ErrDirty{Version: v}
	case v == database.NilVersion:
		return 0, nil
	}
	return uint(v), nil
}

// withMigrator runs do with golang-migrate on connections of its own whose
// search_path is the job's schema alone: the migration files name tables
// without a schema, so they cannot reach into KEB's public schema, and the
// Store's own connections keep the server's search_path. With create, the
// schema is created first when it does not exist.
func (s *Store) withMigrator(ctx context.Context, create bool, do func(*migrate.Migrate, *recordingDriver) error) error {
	if create {
		if err := s.ensureSchema(ctx); err != nil {
			return err
		}
	}
	cfg := s.connConfig.Copy()
	cfg.RuntimeParams["search_path"] = s.schema
	conns := openDB(*cfg)
	// The driver's Close closes conns: every session it opened ends, and
	// with it any advisory lock still held.
	drv, err := migratepgx.WithInstance(conns, &migratepgx.Config{SchemaName: s.schema, MigrationsTable: migrationsTable})
	if err != nil {
		_ = conns.Close()
		return err
	}
	src, err := iofs.New(migrationFiles, "migrations")
	if err != nil {
		_ = drv.Close()
		return err
	}
	rec := &recordingDriver{Driver: drv}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", rec)
	if err != nil {
		_ = drv.Close()
		_ = src.Close()
		return err
	}
	defer m.Close()
	// The lock wait is a statement too: statement_timeout ends it on the
	// server; golang-migrate's own timer (15 s by default) would give up
	// sooner than a migration that is legitimately under way takes.
	m.LockTimeout = s.statementTimeout
	stop := context.AfterFunc(ctx, func() { m.GracefulStop <- true })
	defer stop()
	if err := do(m, rec); err != nil {
		return err
	}
	// golang-migrate stopped gracefully between two migrations reports
	// success.
	return ctx.Err()
}

// ensureSchema creates the schema unless it exists. It looks first because
// CREATE SCHEMA IF NOT EXISTS still demands the CREATE privilege on the
// database, which a role whose schema an administrator made need not have.
// Two callers creating it at once would collide in the catalog (IF NOT
// EXISTS does not prevent that), so both look and create under a
// transaction-level advisory lock of the job's schema.
func (s *Store) ensureSchema(ctx context.Context) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(s.sql(advisoryXactLock), params{"key": s.advisoryKey("schema")}).Error; err != nil {
			return fmt.Errorf("take the schema lock: %w", err)
		}
		var exists bool
		if err := tx.Raw(s.sql(schemaExists), params{"schema": s.schema}).Scan(&exists).Error; err != nil {
			return fmt.Errorf("look for schema: %w", err)
		}
		if exists {
			return nil
		}
		if err := tx.Exec(s.sql(schemaCreate)).Error; err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		return nil
	})
}

var (
	//go:embed sql/schema_exists.sql
	schemaExists string
	//go:embed sql/schema_create.sql
	schemaCreate string
)
