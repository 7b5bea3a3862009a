package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/golang-migrate/migrate/v4/database"
)

// legacyTable is where releases before golang-migrate recorded the
// schema's migrations: one row (version, name, applied_at) per migration
// applied, in the job's schema. Their migrations 1 to 8 are this release's
// 1 to 8, statement for statement.
const legacyTable = "schema_migrations"

// legacyVersions returns the versions the legacy table records, in order;
// none when the schema has no such table. A table of that name in another
// shape (golang-migrate's own, say) is not the legacy one and is left
// alone.
func (s *Store) legacyVersions(ctx context.Context) ([]uint, error) {
	var columns int
	if err := s.sqlDB.QueryRowContext(ctx, `SELECT count(*) FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attname IN ('version', 'name', 'applied_at') AND NOT attisdropped`,
		s.table(legacyTable)).Scan(&columns); err != nil || columns != 3 {
		return nil, err
	}
	rows, err := s.sqlDB.QueryContext(ctx, "SELECT version FROM "+s.table(legacyTable)+" ORDER BY version")
	if err != nil {
		return nil, err
	}
	var versions []uint
	for rows.Next() {
		var v uint
		if err = rows.Scan(&v); err != nil {
			break
		}
		versions = append(versions, v)
	}
	return versions, errors.Join(err, rows.Err(), rows.Close())
}

// takeOverLegacy hands a schema the legacy migrator recorded over to
// golang-migrate.
// Under golang-migrate's lock, so that two pods upgrading at once take it
// over once: when golang-migrate records nothing yet and the legacy table
// records versions 1 to N, one transaction records N in MigrationsTable and
// drops the legacy table. Up then applies only what is newer than N, and
// every row of the job's tables stays. Doing it here rather than in a
// migration keeps the drop atomic with the version it hands over, and no
// migration file has to name a table that, under another search_path,
// could be KEB's public.schema_migrations.
func (s *Store) takeOverLegacy(ctx context.Context, drv database.Driver, all []Migration) (err error) {
	if err := drv.Lock(); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, drv.Unlock()) }()
	current, _, err := drv.Version()
	if err != nil || current != database.NilVersion {
		return err
	}
	legacy, err := s.legacyVersions(ctx)
	if err != nil || len(legacy) == 0 {
		return err
	}
	n := legacy[len(legacy)-1]
	for i, v := range legacy {
		if v != uint(i+1) || v > all[len(all)-1].Version {
			return fmt.Errorf("take over %s: it records versions %v, want 1 to N with N at most %d", s.table(legacyTable), legacy, all[len(all)-1].Version)
		}
	}
	tx, err := s.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+s.table(MigrationsTable)+" (version, dirty) VALUES ($1, false)", n); err != nil {
		return fmt.Errorf("take over %s: %w", s.table(legacyTable), err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE "+s.table(legacyTable)); err != nil {
		return fmt.Errorf("take over %s: %w", s.table(legacyTable), err)
	}
	return tx.Commit()
}
