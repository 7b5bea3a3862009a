package provisioning_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratepostgres "github.com/golang-migrate/migrate/v4/database/postgres"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// kebMigration is KEB's index as KEB adds it: the module's two files among
// KEB's migrations under a version of KEB's naming, run by golang-migrate's
// postgres driver over lib/pq with no options, as KEB's schema-migrator
// (cmd/schemamigrator) runs its migrations.
func kebMigration(t *testing.T, url string) *migrate.Migrate {
	t.Helper()
	const name = "202612010000_add_instances_active_by_binding_index"
	src, err := iofs.New(fstest.MapFS{
		name + ".up.sql":   {Data: []byte(schema.KEBIndexUp)},
		name + ".down.sql": {Data: []byte(schema.KEBIndexDown)},
	}, ".")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	driver, err := migratepostgres.WithInstance(db, &migratepostgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "postgres", driver)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = m.Close() })
	return m
}

// kebInsert is KEB writing a new instance row at a provision request.
const kebInsert = `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
	provisioning_parameters, created_at, updated_at) VALUES ($1, $1, 'ga-new', 'b-new', '{}', now(), now())`

// KEB's inserts into instances commit while KEB's index builds, as KEB's
// migration runs it (golang-migrate, kebMigration): the build takes no lock
// that an insert waits for. A transaction holding a snapshot older than the
// build keeps the build from finishing (it waits for such transactions
// before it marks the index valid), so that the inserts are seen to commit
// while it runs, by pg_stat_progress_create_index, without racing its end.
// The same insert under lock_timeout fails with lock_not_available against
// the ShareLock a plain CREATE INDEX holds for its whole build. Were the
// migration a plain CREATE INDEX, the first insert after its start would
// wait for the build to end; were it more than one statement,
// golang-migrate's one Exec would run it in a transaction, which refuses
// CONCURRENTLY: either way the test fails.
//
// KEB's table is XL's, as TestPickCostAtXL seeds it: 400,000 instance
// rows, a quarter deleted. Seed and build take seconds, so make test runs it
// at that size.
func TestKEBInsertsWhileItsIndexBuilds(t *testing.T) {
	b := newBed(t)
	ctx := testbed.Context(t, 10*time.Minute)
	b.exec(t, schema.KEBIndexDown)
	seedXLInstances(t, b)
	b.exec(t, `VACUUM ANALYZE instances`)
	m := kebMigration(t, b.url)

	// The snapshot that holds the build back, taken before it starts.
	holder, err := b.keb.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback() }()
	if _, err := holder.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	built := make(chan error, 1)
	go func() { built <- m.Up() }()

	// KEB's inserts, one after another, each committed before the next;
	// after each, what the build is doing.
	committed := map[string]int{} // by the build's phase at the commit
	var sawBuild testbed.IndexBuild
	var atPhase time.Duration
	for i := 0; committed[testbed.PhaseWaitingForOldSnapshots] < 20; i++ {
		if _, err := b.keb.ExecContext(ctx, kebInsert, fmt.Sprintf("new-%d", i)); err != nil {
			t.Fatalf("KEB's insert %d: %v", i, err)
		}
		build, running, err := testbed.IndexBuildOn(ctx, b.keb, "instances")
		if err != nil {
			t.Fatal(err)
		}
		if !running {
			select {
			case err := <-built:
				t.Fatalf("KEB's migration ended (%v) before the test let it go, KEB's inserts committed by the build's phase %v; want them to commit while it runs",
					err, committed)
			default:
			}
			if sawBuild.PID != 0 {
				t.Fatalf("the build ended before KEB's insert %d committed; want it held back until the test lets it go", i)
			}
			committed["before the build"]++
			continue
		}
		if sawBuild.PID == 0 {
			sawBuild = build
			if build.Command != "CREATE INDEX CONCURRENTLY" {
				t.Errorf("KEB's migration builds with %q, want CREATE INDEX CONCURRENTLY", build.Command)
			}
			modes := lockModes(t, ctx, b.keb, build.PID)
			if !strings.Contains(modes, "ShareUpdateExclusiveLock") || strings.Contains(modes, "ShareLock ") {
				t.Errorf("the build holds %s on instances, want ShareUpdateExclusiveLock and no ShareLock", modes)
			}
		}
		if build.Phase == testbed.PhaseWaitingForOldSnapshots && atPhase == 0 {
			atPhase = time.Since(began)
		}
		committed[build.Phase]++
	}
	if valid := indexValid(t, ctx, b.keb); valid {
		t.Fatalf("%s valid while its build still waits", schema.KEBIndexName)
	}
	if err := insertWithin(ctx, b.keb, "new-under-lock-timeout"); err != nil {
		t.Errorf("KEB's insert under lock_timeout during the build: %v, want it committed", err)
	}
	during := 0
	for phase, n := range committed {
		if phase != "before the build" {
			during += n
		}
	}
	t.Logf("%d instance rows: the build had built and validated the index %s after the migration began; %d of KEB's inserts committed while it ran, by phase %v",
		costRows, atPhase.Round(time.Millisecond), during, committed)

	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-built; err != nil {
		t.Fatalf("KEB's migration: %v", err)
	}
	if version, dirty, err := m.Version(); err != nil || dirty || version != 202612010000 {
		t.Fatalf("golang-migrate's version after the migration: %d, dirty %t, %v", version, dirty, err)
	}
	if !indexValid(t, ctx, b.keb) {
		t.Fatalf("%s not valid after KEB's migration", schema.KEBIndexName)
	}
	// The rows inserted while it built are in it.
	var inIndex int
	var plan string
	tx, err := b.keb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	const count = `SELECT count(*) FROM instances WHERE subscription_secret_name = 'b-new' AND ` + schema.ActiveInstance
	if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(ctx, "EXPLAIN "+count)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan += line + "\n"
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRowContext(ctx, count).Scan(&inIndex); err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback()
	if want := committed["before the build"] + during + 1; inIndex != want || !strings.Contains(plan, schema.KEBIndexName) {
		t.Errorf("KEB's new rows through %s: %d (plan %q), want %d", schema.KEBIndexName, inIndex, plan, want)
	}

	if err := m.Down(); err != nil {
		t.Fatalf("KEB's migration down (DROP INDEX CONCURRENTLY): %v", err)
	}
	if indexExists(t, ctx, b.keb) {
		t.Fatalf("%s still there after KEB's migration down", schema.KEBIndexName)
	}

	// What a plain CREATE INDEX would have done: it holds a ShareLock on
	// instances until it ends, and KEB's insert waits for it. The build is
	// held in a transaction here so that its end cannot race the insert.
	plain := strings.Replace(schema.KEBIndexUp, "CREATE INDEX CONCURRENTLY", "CREATE INDEX", 1)
	builder, err := b.keb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = builder.Rollback() }()
	var pid int
	if err := builder.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if _, err := builder.ExecContext(ctx, plain); err != nil {
		t.Fatal(err)
	}
	t.Logf("the plain CREATE INDEX on %d rows took %s, as long as it would keep KEB's inserts waiting", costRows, time.Since(started).Round(time.Millisecond))
	if modes := lockModes(t, ctx, b.keb, pid); !strings.Contains(modes, "ShareLock ") {
		t.Fatalf("the plain build holds %s on instances, want a ShareLock", modes)
	}
	var pgErr *pgconn.PgError
	if err := insertWithin(ctx, b.keb, "new-beside-a-plain-build"); !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Fatalf("KEB's insert beside a plain CREATE INDEX: %v, want lock_not_available (55P03)", err)
	}
}

// insertWithin is KEB's insert of instance id, given up when it waits for a
// lock longer than a lock_timeout of 200 ms.
func insertWithin(ctx context.Context, db *sql.DB, id string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '200ms'"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, kebInsert, id); err != nil {
		return err
	}
	return tx.Commit()
}

// lockModes lists the modes backend pid holds on instances, each followed
// by a space.
func lockModes(t *testing.T, ctx context.Context, db *sql.DB, pid int) string {
	t.Helper()
	var modes string
	if err := db.QueryRowContext(ctx, `SELECT coalesce(string_agg(mode || ' ', '' ORDER BY mode), '') FROM pg_locks
		WHERE pid = $1 AND granted AND relation = 'instances'::regclass`, pid).Scan(&modes); err != nil {
		t.Fatal(err)
	}
	return modes
}

func indexExists(t *testing.T, ctx context.Context, db *sql.DB) bool {
	t.Helper()
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, schema.KEBIndexName).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

func indexValid(t *testing.T, ctx context.Context, db *sql.DB) bool {
	t.Helper()
	var valid bool
	if err := db.QueryRowContext(ctx, `SELECT coalesce((SELECT indisvalid AND indisready FROM pg_index WHERE indexrelid = to_regclass($1)), false)`,
		schema.KEBIndexName).Scan(&valid); err != nil {
		t.Fatal(err)
	}
	return valid
}
