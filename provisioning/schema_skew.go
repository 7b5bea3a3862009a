package provisioning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// schemaRecheck is how long a Client relies on a schema version it last
// found readable before NextBinding reads it again. A skew is relied on by
// no pick, and a statement that fails has the next pick read the version
// (schemaMayHaveMoved): an upgrade of the job is picked from at the next
// pick, and a rollback fails at most the statements in flight when it
// lands; the interval only bounds how late a change that breaks no
// statement is noticed.
const schemaRecheck = time.Minute

// ErrSchemaSkew means the job's schema is at a version outside what this module
// reads (schema.Oldest to schema.Newest), or records none. NextBinding
// answers it before any statement on the job's tables, and KEB takes its
// live path until the job's schema or KEB's pin moves back within the range.
var ErrSchemaSkew = schema.ErrSkew

// schemaVersionSQL reads what golang-migrate records for the job's schema
// (the job's migrations table, one row).
const schemaVersionSQL = `SELECT version, dirty FROM %s.hap_reconciler_migrations`

// checkSchemaVersion answers nil when the job's schema is at a version this
// module reads, an error wrapping ErrSchemaSkew when it is not, or the
// query's error. A readable version is kept for schemaRecheck (lookedAt).
func (c *Client) checkSchemaVersion(ctx context.Context) error {
	if err := schema.Check(c.Schema); err != nil {
		return err
	}
	name := schema.OrDefault(c.Schema)
	err := c.schemaVersion.answer(name, schemaRecheck, func() (skew, failed error) {
		version, dirty, err := c.readSchemaVersion(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("read the version of the job's schema %s (KEB's role needs SELECT on %s.hap_reconciler_migrations): %w", name, name, err)
		}
		return schema.ModuleReads().Check(version, dirty), nil
	})
	if errors.Is(err, ErrSchemaSkew) {
		// A skew is not kept: the next pick reads the version again, so the
		// hand-off ends with the pick after the migration that ends it (the
		// job upgraded, or rolled forward again), not up to schemaRecheck
		// later. KEB is on its live path meanwhile, beside which one row
		// read per pick costs nothing.
		c.schemaVersion.forget()
	}
	return err
}

// schemaMayHaveMoved is told of every statement that failed: the job's
// schema may have moved under the version last read (a rollback that
// dropped a column the statement reads), so the next pick reads the
// version again instead of failing the same way until schemaRecheck.
func (c *Client) schemaMayHaveMoved() { c.schemaVersion.forget() }

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
