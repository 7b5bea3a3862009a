package testbed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's pgx, for the watching connection

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// PhaseWaitingForOldSnapshots is the phase of CREATE INDEX CONCURRENTLY,
// as pg_stat_progress_create_index names it, after the index is built and
// validated, in which it waits for every transaction whose snapshot is
// older than the validation's before it marks the index valid. A
// transaction that holds its snapshot (REPEATABLE READ) keeps the build
// there until it ends.
const PhaseWaitingForOldSnapshots = "waiting for old snapshots"

// indexBuildSQL is the phase and the backend of the index build on table $1
// in the connection's database, no row when none runs.
const indexBuildSQL = `SELECT p.phase, p.pid, p.command FROM pg_stat_progress_create_index p
	JOIN pg_class c ON c.oid = p.relid WHERE c.relname = $1 AND p.datname = current_database()`

// IndexBuild is an index build in progress, as pg_stat_progress_create_index
// shows it.
type IndexBuild struct {
	Phase   string
	PID     int
	Command string // CREATE INDEX or CREATE INDEX CONCURRENTLY
}

// IndexBuildOn is the index build running on table in db's database, and
// false when none runs.
func IndexBuildOn(ctx context.Context, db *sql.DB, table string) (IndexBuild, bool, error) {
	var b IndexBuild
	err := db.QueryRowContext(ctx, indexBuildSQL, table).Scan(&b.Phase, &b.PID, &b.Command)
	if errors.Is(err, sql.ErrNoRows) {
		return IndexBuild{}, false, nil
	}
	return b, err == nil, err
}

// WaitForIndexBuildPhase returns once an index build on table in db's
// database is in phase, or when ctx ends.
func WaitForIndexBuildPhase(ctx context.Context, db *sql.DB, table, phase string) (IndexBuild, error) {
	var b IndexBuild
	err := pollUntil(ctx, 10*time.Millisecond, func(ctx context.Context) (bool, error) {
		var ok bool
		var err error
		b, ok, err = IndexBuildOn(ctx, db, table)
		return ok && b.Phase == phase, err
	})
	if err != nil {
		return b, fmt.Errorf("no index build on %s reached %q (last seen %+v): %w", table, phase, b, err)
	}
	return b, nil
}

// LeaveKEBIndexInvalid leaves in database dbname what a concurrent build of
// KEB's index that failed leaves: the index, INVALID. It builds the index
// with schema.KEBIndexUp while a transaction holds an older
// snapshot, so the build waits for it once the index is built
// (PhaseWaitingForOldSnapshots), and cancels the build there. An index
// already there is dropped first.
func (p *Postgres) LeaveKEBIndexInvalid(ctx context.Context, dbname string) error {
	if err := p.Exec(ctx, dbname, schema.KEBIndexDown); err != nil {
		return err
	}
	watch, err := sql.Open("pgx", p.URL(dbname))
	if err != nil {
		return err
	}
	defer watch.Close()
	holder, err := watch.Conn(ctx)
	if err != nil {
		return err
	}
	defer holder.Close()
	snapshot, err := holder.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return err
	}
	defer func() { _ = snapshot.Rollback() }()
	if _, err := snapshot.ExecContext(ctx, "SELECT 1"); err != nil {
		return err
	}

	builder, err := pgx.Connect(ctx, p.URL(dbname))
	if err != nil {
		return err
	}
	defer builder.Close(context.Background())
	built := make(chan error, 1)
	go func() {
		_, err := builder.Exec(ctx, schema.KEBIndexUp)
		built <- err
	}()
	b, err := WaitForIndexBuildPhase(ctx, watch, "instances", PhaseWaitingForOldSnapshots)
	if err != nil {
		return err
	}
	if _, err := watch.ExecContext(ctx, "SELECT pg_cancel_backend($1)", b.PID); err != nil {
		return err
	}
	var pgErr *pgconn.PgError
	if err := <-built; !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		return fmt.Errorf("the cancelled build of %s answered %v, want query_canceled (57014)", schema.KEBIndexName, err)
	}
	var valid, ready bool
	if err := watch.QueryRowContext(ctx, `SELECT indisvalid, indisready FROM pg_index WHERE indexrelid = $1::regclass`,
		schema.KEBIndexName).Scan(&valid, &ready); err != nil {
		return fmt.Errorf("the cancelled build left no index %s: %w", schema.KEBIndexName, err)
	}
	if valid || !ready {
		return fmt.Errorf("the cancelled build left %s valid %t, ready %t; want it invalid and ready", schema.KEBIndexName, valid, ready)
	}
	return nil
}
