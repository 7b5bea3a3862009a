package provisioning

import (
	"context"
	"fmt"
	"sync/atomic"
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

// kebIndexCheck is what a Client last found of KEB's index.
type kebIndexCheck struct {
	seen atomic.Pointer[kebIndexSeen]
}

type kebIndexSeen struct {
	at  time.Time
	err error // nil: the index is valid; else wraps ErrNoKEBIndex
}

// checkKEBIndex answers nil when KEB's index is valid, an error wrapping
// ErrNoKEBIndex when it is missing or invalid, or the catalog query's
// error. What it finds of the index is kept for kebIndexRecheck; a query
// that fails is not kept, so the next call asks again. Concurrent calls
// after the interval may each look once; none waits for another.
func (c *Client) checkKEBIndex(ctx context.Context) error {
	if s := c.kebIndex.seen.Load(); s != nil && time.Since(s.at) < kebIndexRecheck {
		return s.err
	}
	exists, valid, err := c.lookForKEBIndex(ctx)
	if err != nil {
		return fmt.Errorf("look for KEB's index %s: %w", schema.KEBIndexName, err)
	}
	var missing error
	switch {
	case !exists:
		missing = fmt.Errorf("%w: it does not exist; KEB adds it with its own migrations, and the table answers once it is built", ErrNoKEBIndex)
	case !valid:
		missing = fmt.Errorf("%w: it is INVALID, being built concurrently or left by a build that failed; "+
			"after a failed build KEB drops it (schema.KEBIndexDown) and runs the migration again", ErrNoKEBIndex)
	}
	c.kebIndex.seen.Store(&kebIndexSeen{at: time.Now(), err: missing})
	return missing
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
