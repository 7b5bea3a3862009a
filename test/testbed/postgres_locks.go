package testbed

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// WaitForLockWait returns once some statement waits for a lock on table:
// the moment a test set up with a lock of its own, reached by another
// goroutine or process. It gives up when ctx ends.
func WaitForLockWait(ctx context.Context, db *sql.DB, table string) error {
	for {
		var waiting int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE c.relname = $1 AND NOT l.granted`, table).Scan(&waiting)
		if err != nil {
			return fmt.Errorf("no statement waited on %s: %w", table, err)
		}
		if waiting > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no statement waited on %s: %w", table, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
