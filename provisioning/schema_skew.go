package provisioning

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// schemaRecheck is how long a Client relies on the schema version it last
// read before NextBinding reads it again: a migration or a rollback of the
// job while KEB runs is noticed within it.
const schemaRecheck = time.Minute

// ErrSchemaSkew means the job's schema is at a version outside what this module
// reads (schema.Oldest to schema.Newest), or records none. NextBinding
// answers it before any statement on the job's tables, and KEB takes its
// live path until the job's schema or KEB's pin moves back within the range.
var ErrSchemaSkew = schema.ErrSkew

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
	skew := schema.ModuleReads().Check(version, dirty)
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
