package provisioning

import (
	"context"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// kebIndexRecheck is how long a Client relies on what it last found of
// KEB's index (schema.KEBIndexName) before NextBinding looks at the catalog
// again: a client created before KEB's migration built the index answers
// ErrNoKEBIndex for at most this long after it is valid, and one that saw
// it valid notices a dropped index within this long.
const kebIndexRecheck = time.Minute

// kebIndexSQL answers one row when the instances table the pick reads (the
// first on the search_path, as the pick resolves it) holds an index named
// $1: true when PostgreSQL uses it for reads and keeps it current on
// writes. A concurrent build still running, or one that failed, leaves the
// index with indisvalid false (and indisready false before the build
// phase). It reads two catalog tables of some hundred rows each (a fifth
// of a millisecond on the test bed), once per kebIndexRecheck, not per
// pick.
const kebIndexSQL = `SELECT i.indisvalid AND i.indisready
FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = to_regclass('instances') AND c.relname = $1`

// checkKEBIndex answers nil when KEB's index is valid, an error wrapping
// ErrNoKEBIndex when it is missing or invalid, or the catalog query's
// error. What it finds of the index is kept for kebIndexRecheck (lookedAt).
func (c *Client) checkKEBIndex(ctx context.Context) error {
	return c.kebIndex.answer("", kebIndexRecheck, func() (missing, failed error) {
		exists, valid, err := c.lookForKEBIndex(ctx)
		switch {
		case err != nil:
			return nil, fmt.Errorf("look for KEB's index %s: %w", schema.KEBIndexName, err)
		case !exists:
			return fmt.Errorf("%w: it does not exist; KEB adds it with its own migrations, and the table answers once it is built", ErrNoKEBIndex), nil
		case !valid:
			return fmt.Errorf("%w: it is INVALID, being built concurrently or left by a build that failed; "+
				"after a failed build KEB drops it (schema.KEBIndexDown) and runs the migration again", ErrNoKEBIndex), nil
		}
		return nil, nil
	})
}

// lookForKEBIndex reads the catalog once (kebIndexSQL).
func (c *Client) lookForKEBIndex(ctx context.Context) (exists, valid bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	rows, err := c.query(ctx, kebIndexSQL, schema.KEBIndexName)
	if err != nil {
		return false, false, err
	}
	defer rows.Close()
	for rows.Next() {
		exists = true
		if err := rows.Scan(&valid); err != nil {
			return false, false, err
		}
	}
	return exists, valid, rows.Err()
}
