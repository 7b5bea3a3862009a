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
	err := pollUntil(ctx, 10*time.Millisecond, func(ctx context.Context) (bool, error) {
		var waiting int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE c.relname = $1 AND NOT l.granted`, table).Scan(&waiting)
		return waiting > 0, err
	})
	if err != nil {
		return fmt.Errorf("no statement waited on %s: %w", table, err)
	}
	return nil
}

// WaitForRowLockWait returns once a statement in db's database waits for a
// row another transaction holds (a row lock shows in pg_locks as a wait on
// that transaction, not on the table), or when ctx ends.
func WaitForRowLockWait(ctx context.Context, db *sql.DB) error {
	return WaitForRowLockWaits(ctx, db, 1)
}

// WaitForRowLockWaits returns once n statements in db's database wait at
// the same moment for rows other transactions hold (see WaitForRowLockWait),
// or when ctx ends.
func WaitForRowLockWaits(ctx context.Context, db *sql.DB, n int) error {
	err := pollUntil(ctx, 10*time.Millisecond, func(ctx context.Context) (bool, error) {
		var waiting int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`).Scan(&waiting)
		return waiting >= n, err
	})
	if err != nil {
		return fmt.Errorf("fewer than %d statements waited on a row: %w", n, err)
	}
	return nil
}
