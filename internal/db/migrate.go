package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations reads the embedded files, named NNNN_what.sql, in version
// order.
func migrations() ([]migration, error) {
	paths, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var all []migration
	for _, p := range paths {
		name := strings.TrimSuffix(path.Base(p), ".sql")
		prefix, _, _ := strings.Cut(name, "_")
		version, err := strconv.Atoi(prefix)
		if err != nil || version < 1 {
			return nil, fmt.Errorf("migration file %s: name must start with a positive version number", p)
		}
		text, err := migrationFiles.ReadFile(p)
		if err != nil {
			return nil, err
		}
		all = append(all, migration{version: version, name: name, sql: string(text)})
	}
	slices.SortFunc(all, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(all); i++ {
		if all[i].version == all[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", all[i-1].name, all[i].name, all[i].version)
		}
	}
	return all, nil
}

// Migrate brings the job's schema to the newest version. It is idempotent,
// and concurrent callers (two pods starting at once) are serialised by a
// transaction-level advisory lock: the second waits, then finds nothing
// left to do. All of it is one transaction, so a failed step leaves the
// schema as it was. A schema already at the newest version is only read:
// a role without DDL rights (the job's runtime role, when the schema owner
// migrates in a step of its own) passes.
func (s *Store) Migrate(ctx context.Context) error {
	all, err := migrations()
	if err != nil {
		return err
	}
	if s.upToDate(ctx, all) {
		return nil
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", s.advisoryKey("migrate")).Error; err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
		if err := s.ensureSchema(tx); err != nil {
			return err
		}
		var applied []int
		if err := tx.Raw("SELECT version FROM " + s.table("schema_migrations")).Scan(&applied).Error; err != nil {
			return fmt.Errorf("read applied migrations: %w", err)
		}
		for _, m := range all {
			if slices.Contains(applied, m.version) {
				continue
			}
			if err := tx.Exec(strings.ReplaceAll(m.sql, "{{schema}}", s.schema)).Error; err != nil {
				return fmt.Errorf("apply migration %s: %w", m.name, err)
			}
			if err := tx.Exec("INSERT INTO "+s.table("schema_migrations")+" (version, name) VALUES (?, ?)",
				m.version, m.name).Error; err != nil {
				return fmt.Errorf("record migration %s: %w", m.name, err)
			}
		}
		return nil
	})
	return s.wrap("migrate schema "+s.schema, err)
}

// upToDate reports whether every migration is recorded, reading only; any
// error (no schema yet, no table, no right to read it) means "not known to
// be", and Migrate goes the full way, which reports the error if it lasts.
func (s *Store) upToDate(ctx context.Context, all []migration) bool {
	var table *string
	if err := s.db.WithContext(ctx).Raw("SELECT to_regclass(?)::text", s.schema+".schema_migrations").Scan(&table).Error; err != nil || table == nil {
		return false
	}
	var applied []int
	if err := s.db.WithContext(ctx).Raw("SELECT version FROM " + s.table("schema_migrations")).Scan(&applied).Error; err != nil {
		return false
	}
	for _, m := range all {
		if !slices.Contains(applied, m.version) {
			return false
		}
	}
	return true
}

// ensureSchema creates the schema unless it exists. It looks first because
// CREATE SCHEMA IF NOT EXISTS still demands the CREATE privilege on the
// database, which a role whose schema an administrator made need not have.
func (s *Store) ensureSchema(tx *gorm.DB) error {
	var exists bool
	if err := tx.Raw("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ?)", s.schema).Scan(&exists).Error; err != nil {
		return fmt.Errorf("look for schema: %w", err)
	}
	if !exists {
		if err := tx.Exec("CREATE SCHEMA " + s.schema).Error; err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	err := tx.Exec(`CREATE TABLE IF NOT EXISTS ` + s.table("schema_migrations") + ` (
		version    integer     PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`).Error
	if err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	return nil
}
