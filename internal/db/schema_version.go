package db

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
)

// errSchemaNotCurrent means the job's schema is not at the version this
// release needs, and the caller may not migrate it (a dry run).
var errSchemaNotCurrent = errors.New("the job's schema is not at this release's version")

// SchemaVersion is what the job's schema records, as read without writing.
type SchemaVersion struct {
	Schema string
	// Version is the newest migration applied, 0 for none.
	Version uint
	// Dirty: the migration Version failed part-way (golang-migrate's mark).
	Dirty bool
	// Legacy: only the migrator of releases before golang-migrate recorded
	// the schema (its schema_migrations table); the next migrate takes it
	// over.
	Legacy bool
	// Latest is the newest migration this release has.
	Latest uint
}

// Current says whether the schema is exactly what this release needs.
func (v SchemaVersion) Current() bool {
	return !v.Legacy && !v.Dirty && v.Version == v.Latest
}

// Err explains what keeps the schema from being current, wrapping
// errSchemaNotCurrent; nil when it is.
func (v SchemaVersion) Err() error {
	var why string
	switch {
	case v.Current():
		return nil
	case v.Dirty:
		why = fmt.Sprintf("migration %d failed part-way and is marked dirty in %s.%s", v.Version, v.Schema, migrationsTable)
	case v.Legacy:
		why = fmt.Sprintf("it is recorded at version %d by the migrator of earlier releases (%s.%s), not yet taken over by this release's", v.Version, v.Schema, legacyTable)
	case v.Version == 0:
		why = "no migration is recorded"
	case v.Version < v.Latest:
		why = fmt.Sprintf("it is at version %d", v.Version)
	default:
		why = fmt.Sprintf("it is at version %d, newer than this release knows", v.Version)
	}
	return fmt.Errorf("%w: schema %q needs version %d and %s", errSchemaNotCurrent, v.Schema, v.Latest, why)
}

var (
	//go:embed sql/table_name.sql
	tableName string
	//go:embed sql/schema_version_read.sql
	schemaVersionRead string
)

// SchemaVersion reads the version the job's schema records. It only reads
// (no lock, no table created), so any role that may read the migrations
// table can ask.
func (s *Store) SchemaVersion(ctx context.Context) (SchemaVersion, error) {
	all, err := migrations()
	if err != nil {
		return SchemaVersion{}, err
	}
	v := SchemaVersion{Schema: s.schema, Latest: all[len(all)-1].Version}
	db := s.db.WithContext(ctx)
	var table *string
	if err := db.Raw(s.sql(tableName), params{"table": s.table(migrationsTable)}).Scan(&table).Error; err != nil {
		return v, s.wrap("read the schema's version", err)
	}
	recorded := false
	if table != nil {
		var rows []struct {
			Version uint
			Dirty   bool
		}
		if err := db.Raw(s.sql(schemaVersionRead, migrationTables...)).Scan(&rows).Error; err != nil {
			return v, s.wrap("read the schema's version", err)
		}
		if recorded = len(rows) > 0; recorded {
			v.Version, v.Dirty = rows[0].Version, rows[0].Dirty
		}
	}
	if !recorded {
		legacy, err := s.legacyVersions(ctx)
		if err != nil {
			return v, s.wrap("read the schema's version", err)
		}
		if len(legacy) > 0 {
			v.Version, v.Legacy = legacy[len(legacy)-1], true
		}
	}
	return v, nil
}

// RequireCurrentSchema returns nil when the schema is at this release's
// version, and otherwise an error wrapping errSchemaNotCurrent that says
// where it stands. It only reads.
func (s *Store) RequireCurrentSchema(ctx context.Context) (err error) {
	defer func() { err = explain(err, s.schema) }()
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	return v.Err()
}

// LatestVersion is the newest migration this release has: the schema
// version migrate leaves.
func LatestVersion() (uint, error) {
	all, err := migrations()
	if err != nil {
		return 0, err
	}
	return all[len(all)-1].Version, nil
}
