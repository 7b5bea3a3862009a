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

// WaitForRowLockWait returns once a statement in db's database waits for a
// row another transaction holds (a row lock shows in pg_locks as a wait on
// that transaction, not on the table), or when ctx ends.
func WaitForRowLockWait(ctx context.Context, db *sql.DB) error {
	for {
		var waiting int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`).Scan(&waiting)
		if err != nil {
			return fmt.Errorf("no statement waited on a row: %w", err)
		}
		if waiting > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no statement waited on a row: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
