package provisioning

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// The versions of the job's schema this release of the module reads
// (docs/deployment.md#the-skew-between-kebs-module-and-the-jobs-schema).
// SchemaOldest is the oldest whose tables and columns every statement here
// uses: 11, for candidates_computed.gardener_seen_at. SchemaNewest is the
// schema this release was built with and the one after: the job's next
// migration only adds, never drops or changes what this module reads, so
// the job may be upgraded before KEB raises its pin.
const (
	SchemaOldest = 11
	SchemaNewest = 12
)

// schemaRecheck is how long a Client relies on the schema version it last
// read before NextBinding reads it again: a migration or a rollback of the
// job while KEB runs is noticed within it.
const schemaRecheck = time.Minute

// ErrSchemaSkew: the job's schema is at a version outside what this module
// reads (SchemaOldest to SchemaNewest), or records none. NextBinding answers
// it before any statement on the job's tables, and KEB takes its live path
// until the job's schema or KEB's pin moves back within the range.
var ErrSchemaSkew = errors.New("the job's schema is at a version this module does not read")

// SchemaRange is the versions of the job's schema a release of the module
// reads, both included.
type SchemaRange struct{ Oldest, Newest int }

// ModuleReads is the range of this release of the module.
func ModuleReads() SchemaRange { return SchemaRange{Oldest: SchemaOldest, Newest: SchemaNewest} }

func (r SchemaRange) String() string { return fmt.Sprintf("%d to %d", r.Oldest, r.Newest) }

// Check answers nil when a schema golang-migrate records at version, dirty
// or not, is one r reads, and otherwise an error wrapping ErrSchemaSkew
// that names both. A dirty version failed part-way; its migration is one
// transaction, so the schema stands as the version before left it (and
// stands so while a migration runs).
func (r SchemaRange) Check(version int, dirty bool) error {
	stands := version
	if dirty {
		stands--
	}
	if stands >= r.Oldest && stands <= r.Newest {
		return nil
	}
	at := fmt.Sprintf("version %d", version)
	switch {
	case version <= 0:
		at = "no version"
	case dirty:
		at = fmt.Sprintf("version %d, marked dirty (it stands as version %d left it)", version, stands)
	}
	return fmt.Errorf("%w: the module reads versions %s and the job's schema records %s", ErrSchemaSkew, r, at)
}

// schemaVersionSQL reads what golang-migrate records for the job's schema
// (the job's migrations table, one row).
const schemaVersionSQL = `SELECT version, dirty FROM %s.hap_reconciler_migrations`

// schemaCheck is what a Client last found of the job's schema version.
type schemaCheck struct {
	seen atomic.Pointer[schemaSeen]
}

type schemaSeen struct {
	at     time.Time
	schema string
	err    error // nil: the module reads the schema; else wraps ErrSchemaSkew
}

// checkSchemaVersion answers nil when the job's schema is at a version this
// module reads, an error wrapping ErrSchemaSkew when it is not, or the
// query's error. What it finds is kept for schemaRecheck; a query that
// fails is not kept, so the next call asks again. Concurrent calls after
// the interval may each look once; none waits for another.
func (c *Client) checkSchemaVersion(ctx context.Context) error {
	if err := schema.Check(c.Schema); err != nil {
		return err
	}
	name := schema.OrDefault(c.Schema)
	if s := c.schemaVersion.seen.Load(); s != nil && s.schema == name && time.Since(s.at) < schemaRecheck {
		return s.err
	}
	version, dirty, err := c.readSchemaVersion(ctx, name)
	if err != nil {
		return fmt.Errorf("read the version of the job's schema %s (KEB's role needs SELECT on %s.hap_reconciler_migrations): %w", name, name, err)
	}
	skew := ModuleReads().Check(version, dirty)
	c.schemaVersion.seen.Store(&schemaSeen{at: time.Now(), schema: name, err: skew})
	return skew
}

// readSchemaVersion reads the one row of the job's migrations table in
// schema name, a checked name; none is version 0.
func (c *Client) readSchemaVersion(ctx context.Context, name string) (version int, dirty bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	rows, err := c.query(ctx, fmt.Sprintf(schemaVersionSQL, name))
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&version, &dirty); err != nil {
			return 0, false, err
		}
	}
	return version, dirty, rows.Err()
}
