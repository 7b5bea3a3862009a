package db

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/golang-migrate/migrate/v4/database"
	"gorm.io/gorm"
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
	db := s.db.WithContext(ctx)
	if err := db.Raw(s.sql(legacyTableShape), params{"table": s.table(legacyTable)}).Scan(&columns).Error; err != nil || columns != 3 {
		return nil, err
	}
	var versions []uint
	err := db.Raw(s.sql(legacyVersions, migrationTables...)).Scan(&versions).Error
	return versions, err
}

var (
	//go:embed sql/legacy_table_shape.sql
	legacyTableShape string
	//go:embed sql/legacy_versions.sql
	legacyVersions string
	//go:embed sql/legacy_record_version.sql
	legacyRecordVersion string
	//go:embed sql/legacy_drop.sql
	legacyDrop string
)

// migrationTables fill a statement's names of golang-migrate's table and
// the legacy migrator's.
var migrationTables = []string{"{{migrations}}", migrationsTable, "{{legacy}}", legacyTable}

// takeOverLegacy hands a schema the legacy migrator recorded over to
// golang-migrate.
// Under golang-migrate's lock, so that two pods upgrading at once take it
// over once: when golang-migrate records nothing yet and the legacy table
// records versions 1 to N, one transaction records N in migrationsTable and
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
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(s.sql(legacyRecordVersion, migrationTables...), params{"version": n}).Error; err != nil {
			return fmt.Errorf("take over %s: %w", s.table(legacyTable), err)
		}
		if err := tx.Exec(s.sql(legacyDrop, migrationTables...)).Error; err != nil {
			return fmt.Errorf("take over %s: %w", s.table(legacyTable), err)
		}
		return nil
	})
}
