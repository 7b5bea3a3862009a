package db

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// testLockWait bounds a test's wait for a lock: a session's statement
// timeout, so a wait that never ends fails the test instead of hanging it.
const testLockWait = 30 * time.Second

// legacyMigrate does to schema what the migrator of releases before
// golang-migrate did (internal/db/migrate.go before it): in one
// transaction, create the schema unless it exists (looking first), its
// schema_migrations table, then apply migrations 1 to upTo and record each by version and
// name. Its files were today's up files with every table written
// {{schema}}.name, which it replaced by the schema; search_path does that
// here.
func legacyMigrate(t *testing.T, db *sql.DB, schema string, upTo uint) {
	t.Helper()
	ctx := testContext(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var exists bool
	if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		if _, err := tx.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
			t.Fatal(err)
		}
	}
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS ` + schema + `.schema_migrations (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`,
		"SET LOCAL search_path TO " + schema,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range upFiles(t, upTo) {
		if _, err := tx.ExecContext(ctx, f.sql); err != nil {
			t.Fatalf("legacy migration %s: %v", f.name, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+schema+".schema_migrations (version, name) VALUES ($1, $2)", f.version, f.name); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// oneRowEach writes a row into every job table that exists at version
// (the migration that created it is at most version).
var oneRowEach = []struct {
	since uint
	table string
	row   string
}{
	{1, "binding_drift", "(binding_name, kind, first_seen, last_seen) VALUES ('b-1', 'count_mismatch', now(), now())"},
	{1, "binding_candidates", `(binding_name, global_account_id, hyperscaler_type, eu_access, db_count, shoot_count, effective_count,
		cluster_limit, headroom, selectable, rank, reserved, computed_at) VALUES ('b-1', 'ga-a', 'aws', false, 1, 1, 1, 2, 1, true, 1, 1, now())`},
	{1, "binding_reservations", "(instance_id, binding_name, global_account_id, hyperscaler_type, eu_access) VALUES ('i-9', 'b-1', 'ga-a', 'aws', false)"},
	{1, "binding_empty_since", "(binding_name, global_account_id, empty_since) VALUES ('b-2', 'ga-a', now())"},
	{1, "binding_releases", `(binding_name, global_account_id, hyperscaler_type, eu_access, mode, reason, dry_run, outcome, created_at)
		VALUES ('b-2', 'ga-a', 'aws', false, 'dirty', 'empty', false, 'released', now())`},
	{3, "pool_history", "(recorded_at, hyperscaler_type, eu_access, free, claimed) VALUES (now(), 'aws', false, 3, 4)"},
	{4, "candidates_computed", "(computed_at) VALUES (now())"},
	{5, "withdrawn_bindings", "(binding_name, withdrawn_at) VALUES ('b-3', now())"},
	{6, "candidate_history", `(binding_name, global_account_id, hyperscaler_type, eu_access, db_count, shoot_count, effective_count,
		selectable, guarded, rank, valid_from) VALUES ('b-1', 'ga-a', 'aws', false, 1, 1, 1, true, false, 1, now())`},
	{6, "candidate_rewrites", "(written_at, snapshot_at) VALUES (now(), now())"},
	{6, "shadow_picks", `(instance_id, global_account_id, hyperscaler_type, eu_access, keb_binding, table_answer, outcome, picked_at)
		VALUES ('i-8', 'ga-a', 'aws', false, 'b-1', 'b-1', 'agree', now())`},
	{8, "recorded_claims", "(binding_name, global_account_id, hyperscaler_type, eu_access, claimed_at) VALUES ('b-4', 'ga-a', 'aws', false, now())"},
}

// rowsOf reads every row of every job table of version as JSON objects.
func rowsOf(t *testing.T, db *sql.DB, schema string, version uint) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, r := range oneRowEach {
		if r.since > version {
			continue
		}
		rows, err := db.QueryContext(testContext(t), "SELECT to_jsonb(t)::text FROM "+schema+"."+r.table+" t ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var text string
			var row map[string]any
			if err := rows.Scan(&text); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(text), &row); err != nil {
				t.Fatal(err)
			}
			out[r.table] = append(out[r.table], row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		_ = rows.Close()
	}
	return out
}

// assertRowsKept checks that every row of before is still there with every
// value it had; later migrations may only have added columns.
func assertRowsKept(t *testing.T, before, after map[string][]map[string]any) {
	t.Helper()
	for table, rows := range before {
		if len(after[table]) != len(rows) {
			t.Errorf("%s: %d rows after the upgrade, %d before", table, len(after[table]), len(rows))
			continue
		}
		for i, row := range rows {
			for _, column := range slices.Sorted(maps.Keys(row)) {
				if fmt.Sprint(after[table][i][column]) != fmt.Sprint(row[column]) {
					t.Errorf("%s row %d column %s: %v after the upgrade, %v before", table, i, column, after[table][i][column], row[column])
				}
			}
		}
	}
}

// A database the legacy migrator brought to version 8, or left at an older
// version, with a row in every table: the owner's MigrateUp takes the
// schema over (golang-migrate records the legacy version, the legacy table
// is gone), applies only what is newer, and every row stays. Two pods
// upgrading at once take it over once. The runtime role then passes its
// start-up migrate without DDL.
func TestUpgradeFromTheLegacyMigratorKeepsEveryRow(t *testing.T) {
	for _, legacyAt := range []uint{8, 5} {
		t.Run(fmt.Sprintf("legacy at %d", legacyAt), func(t *testing.T) {
			ctx := testContext(t)
			dbname, owner, runtime := splitRoles(t)
			ownerURL := pg.RoleURL(owner, rightPassword, dbname)
			asOwner := sqlDB(t, ownerURL)
			legacyMigrate(t, asOwner, "hap", legacyAt)
			for _, r := range oneRowEach {
				if r.since <= legacyAt {
					if _, err := asOwner.ExecContext(ctx, "INSERT INTO hap."+r.table+" "+r.row); err != nil {
						t.Fatalf("%s: %v", r.table, err)
					}
				}
			}
			before := rowsOf(t, asOwner, "hap", legacyAt)
			if len(before) == 0 {
				t.Fatal("no rows written")
			}

			stores := []*Store{openStore(t, ownerURL, Options{}), openStore(t, ownerURL, Options{})}
			if v, err := stores[0].SchemaVersion(ctx); err != nil || !v.Legacy || v.Version != legacyAt || v.Current() {
				t.Fatalf("SchemaVersion of the legacy schema: %+v, %v", v, err)
			}
			applied := migrateAtOnce(t, stores)
			all, _ := migrations()
			newer := between(all, legacyAt, all[len(all)-1].Version)
			slices.SortFunc(applied, func(a, b []Migration) int { return len(a) - len(b) })
			if len(applied[0]) != 0 || !slices.Equal(applied[1], newer) {
				t.Fatalf("the two migrators applied %v and %v, want %v once", applied[0], applied[1], newer)
			}
			assertMigrated(t, stores[0], "hap")
			assertRowsKept(t, before, rowsOf(t, asOwner, "hap", legacyAt))

			s := openStore(t, pg.RoleURL(runtime, rightPassword, dbname), Options{})
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("the runtime role's migrate after the takeover: %v", err)
			}
			if _, err := s.ReadInstanceCounts(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A legacy table whose versions have a gap is not one the legacy migrator
// wrote: the takeover refuses it and changes nothing.
func TestTakeoverRefusesALegacyTableWithAGap(t *testing.T) {
	ctx := testContext(t)
	dbname, url := newDatabase(t)
	legacyMigrate(t, sqlDB(t, url), "hap", 4)
	exec(t, dbname, "DELETE FROM hap.schema_migrations WHERE version = 2")
	s := openStore(t, url, Options{})
	if err := s.Migrate(ctx); err == nil || !containsAll(err.Error(), "hap.schema_migrations", "[1 3 4]") {
		t.Fatalf("Migrate over a legacy table with a gap: %v; want a refusal naming the table and its versions", err)
	}
	if v, err := s.SchemaVersion(ctx); err != nil || !v.Legacy || v.Version != 4 {
		t.Fatalf("after the refusal: %+v, %v; want the legacy table as it was", v, err)
	}
}
