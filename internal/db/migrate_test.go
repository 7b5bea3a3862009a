package db

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/golang-migrate/migrate/v4/database"
)

// jobTables are the tables the up files create and do not drop again, in
// version order, with the migrations table: what the newest schema holds.
func jobTables(t *testing.T) []string {
	t.Helper()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]bool{migrationsTable: true}
	statement := regexp.MustCompile(`(?i)\b(CREATE|DROP) TABLE (?:IF (?:NOT )?EXISTS )?([a-z_][a-z0-9_]*)`)
	for _, m := range all {
		up, err := fs.ReadFile(migrationFiles, fmt.Sprintf("migrations/%04d_%s.up.sql", m.Version, m.Name))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range statement.FindAllStringSubmatch(string(up), -1) {
			tables[s[2]] = strings.EqualFold(s[1], "CREATE")
		}
	}
	var out []string
	for name, exists := range tables {
		if exists {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func TestEveryMigrationHasItsUpAndDownFile(t *testing.T) {
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range all {
		if m.Version != uint(i+1) {
			t.Fatalf("migration %s at position %d: want versions 1, 2, ... without gaps", m, i)
		}
	}
	files, err := fs.Glob(migrationFiles, "migrations/*")
	if err != nil || len(files) != 2*len(all) {
		t.Fatalf("%d files for %d migrations (%v): want an up and a down file each", len(files), len(all), err)
	}
}

func TestMigrateTwiceChangesNothing(t *testing.T) {
	s, dbname := migratedStore(t)
	exec(t, dbname, `INSERT INTO hap.binding_empty_since (binding_name, global_account_id, empty_since) VALUES ('b-1', 'ga-a', now())`)
	applied, err := s.MigrateUp(testContext(t))
	if err != nil || len(applied) != 0 {
		t.Fatalf("second MigrateUp: applied %v, %v; want nothing", applied, err)
	}
	assertMigrated(t, s, "hap")
	var n int
	if err := s.db.Raw("SELECT count(*) FROM hap.binding_empty_since").Scan(&n).Error; err != nil || n != 1 {
		t.Fatalf("rows after the second migration: %d, %v; want the one written before", n, err)
	}
}

func TestMigrateUpSaysWhatItApplied(t *testing.T) {
	_, url := newDatabase(t)
	s := openStore(t, url, Options{})
	applied, err := s.MigrateUp(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	all, _ := migrations()
	if !slices.Equal(applied, all) {
		t.Fatalf("applied %v, want every migration %v", applied, all)
	}
}

// Two pods starting at once both migrate. Without the lock one of them
// would fail on a table the other created; several rounds make that race
// likely to show.
func TestConcurrentMigrationsBothSucceed(t *testing.T) {
	_, url := newDatabase(t)
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		schema := fmt.Sprintf("hap_round_%d", round)
		stores := []*Store{openStore(t, url, Options{Schema: schema}), openStore(t, url, Options{Schema: schema})}
		applied := migrateAtOnce(t, stores)
		if n := len(applied[0]) + len(applied[1]); n != len(all) {
			t.Fatalf("round %d: the two applied %v and %v, want each migration once", round, applied[0], applied[1])
		}
		assertMigrated(t, stores[0], schema)
	}
}

// migrateAtOnce runs MigrateUp on every store at the same time and returns
// what each applied.
func migrateAtOnce(t *testing.T, stores []*Store) [][]Migration {
	t.Helper()
	errs := make([]error, len(stores))
	applied := make([][]Migration, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() { applied[i], errs[i] = s.MigrateUp(testContext(t)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("migrator %d: %v", i, err)
		}
	}
	return applied
}

// golang-migrate serialises migrators with an advisory lock whose key it
// derives from the database, the schema and the migrations table. KEB's
// migrator (cmd/schemamigrator: the postgres driver, its defaults) keys on
// public and schema_migrations, so while KEB migrates, the job still
// migrates its own schema: the job migrates here while a session holds
// KEB's lock.
func TestKEBsMigrationLockDoesNotBlockTheJobs(t *testing.T) {
	ctx := testContext(t)
	dbname, url := newDatabase(t)
	kebKey, _ := database.GenerateAdvisoryLockId(dbname, "public", "schema_migrations")
	jobKey, _ := database.GenerateAdvisoryLockId(dbname, defaultSchema, migrationsTable)
	if kebKey == jobKey {
		t.Fatalf("KEB's and the job's migration lock share key %s", kebKey)
	}
	kebSession, err := sqlDB(t, url).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer kebSession.Close()
	if _, err := kebSession.ExecContext(ctx, "SELECT pg_advisory_lock($1)", kebKey); err != nil {
		t.Fatal(err)
	}
	// A statement timeout turns a wait on KEB's lock into an error.
	s := openStore(t, url, Options{StatementTimeout: testLockWait})
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate while KEB's migration lock is held: %v", err)
	}
	assertMigrated(t, s, defaultSchema)
}

// Every down migration undoes its up migration: going down one step at a
// time from the newest version, the schema is at each version exactly what
// the up migrations to that version make of an empty schema (reference
// schemas built beside it). Then up again, the schema is the newest.
func TestDownMigrationsUndoTheUps(t *testing.T) {
	ctx := testContext(t)
	dbname, url := newDatabase(t)
	all, _ := migrations()
	latest := all[len(all)-1].Version
	owner := sqlDB(t, url)
	want := map[uint]string{}
	for v := range latest + 1 {
		schema := fmt.Sprintf("ref_%d", v)
		exec(t, dbname, "CREATE SCHEMA "+schema)
		applyUpFiles(t, owner, schema, v)
		want[v] = describeSchema(t, owner, schema)
	}

	s := openStore(t, url, Options{})
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if got := describeSchema(t, owner, "hap"); got != want[latest] {
		t.Fatalf("after MigrateUp: %s", lineDiff(got, want[latest]))
	}
	for v := latest; v > 0; v-- {
		reverted, err := s.MigrateDown(ctx, 1)
		if err != nil {
			t.Fatalf("down from %d: %v", v, err)
		}
		if len(reverted) != 1 || reverted[0].Version != v {
			t.Fatalf("down from %d reverted %v", v, reverted)
		}
		if got := describeSchema(t, owner, "hap"); got != want[v-1] {
			t.Fatalf("down to %d differs from what the ups to %d make: %s", v-1, v-1, lineDiff(got, want[v-1]))
		}
		if sv, err := s.SchemaVersion(ctx); err != nil || sv.Version != v-1 || sv.Dirty {
			t.Fatalf("recorded version after down to %d: %+v, %v", v-1, sv, err)
		}
	}
	if _, err := s.MigrateDown(ctx, 1); err == nil {
		t.Fatal("MigrateDown at version 0 succeeded; want it refused")
	}
	applied, err := s.MigrateUp(ctx)
	if err != nil || !slices.Equal(applied, all) {
		t.Fatalf("up again from 0: applied %v, %v", applied, err)
	}
	assertMigrated(t, s, "hap")
}

// MigrateDown refuses to go below version 0 before it changes anything.
func TestMigrateDownRefusesMoreStepsThanApplied(t *testing.T) {
	s, _ := migratedStore(t)
	newest := latestVersion(t)
	if _, err := s.MigrateDown(testContext(t), int(newest)+1); err == nil ||
		!containsAll(err.Error(), fmt.Sprintf("migrate down %d", newest+1), fmt.Sprintf("version %d", newest)) {
		t.Fatalf("MigrateDown(%d) at version %d: %v; want a refusal naming both", newest+1, newest, err)
	}
	assertMigrated(t, s, "hap")
}

// latestVersion is the newest migration's version: what a migrated schema
// records.
func latestVersion(t *testing.T) uint {
	t.Helper()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	return all[len(all)-1].Version
}

func assertMigrated(t *testing.T, s *Store, schema string) {
	t.Helper()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Version uint
		Dirty   bool
	}
	if err := s.db.Raw("SELECT version, dirty FROM " + schema + "." + migrationsTable).Scan(&got).Error; err != nil {
		t.Fatalf("read version: %v", err)
	}
	if got.Version != all[len(all)-1].Version || got.Dirty {
		t.Fatalf("schema %s records %+v, want version %d, not dirty", schema, got, all[len(all)-1].Version)
	}
	want := jobTables(t)
	if tables := tablesIn(t, s, schema); !slices.Equal(tables, want) {
		t.Fatalf("tables in %s: %v, want %v", schema, tables, want)
	}
	// Nothing of the job's lands in KEB's schema.
	for _, table := range tablesIn(t, s, "public") {
		if slices.Contains(want, table) {
			t.Fatalf("table %s in public: the job's tables belong in %s", table, schema)
		}
	}
}

func tablesIn(t *testing.T, s *Store, schema string) []string {
	t.Helper()
	var tables []string
	if err := s.db.Raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name`,
		schema).Scan(&tables).Error; err != nil {
		t.Fatal(err)
	}
	return tables
}

// applyUpFiles runs the up files of migrations 1 to upTo into schema, as
// golang-migrate runs them: one statement batch each, with search_path set
// to the schema alone.
func applyUpFiles(t *testing.T, db *sql.DB, schema string, upTo uint) {
	t.Helper()
	ctx := testContext(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET search_path TO "+schema); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), "RESET search_path") }()
	for _, m := range upFiles(t, upTo) {
		if _, err := conn.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("apply %s to %s: %v", m.name, schema, err)
		}
	}
}

type upFile struct {
	version  uint
	name     string // as the legacy migrator recorded it: the file name without .up.sql
	sql      string
	fileName string
}

func upFiles(t *testing.T, upTo uint) []upFile {
	t.Helper()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var out []upFile
	for _, m := range between(all, 0, upTo) {
		name := fmt.Sprintf("%04d_%s", m.Version, m.Name)
		text, err := migrationFiles.ReadFile("migrations/" + name + ".up.sql")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, upFile{version: m.Version, name: name, sql: string(text), fileName: name + ".up.sql"})
	}
	return out
}

// describeSchema is every column (type, nullability, default), index and
// constraint of the schema's tables but the migrations table, one sorted
// line each, the schema's name left out.
func describeSchema(t *testing.T, db *sql.DB, schema string) string {
	t.Helper()
	var text sql.NullString
	err := db.QueryRowContext(testContext(t), `
SELECT string_agg(replace(line, $1 || '.', ''), E'\n' ORDER BY line) FROM (
  SELECT format('column %s.%s %s nullable=%s default=%s', table_name, column_name, data_type, is_nullable, column_default) AS line
    FROM information_schema.columns WHERE table_schema = $1 AND table_name <> $2
  UNION ALL
  SELECT format('index %s', indexdef) FROM pg_indexes WHERE schemaname = $1 AND tablename <> $2
  UNION ALL
  SELECT format('constraint %s.%s %s', c.relname, k.conname, pg_get_constraintdef(k.oid))
    FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relname <> $2
  UNION ALL
  SELECT format('sequence %s', c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relkind = 'S'
) lines`, schema, migrationsTable).Scan(&text)
	if err != nil {
		t.Fatal(err)
	}
	return text.String
}

// lineDiff names the lines only one of got and want has.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var out []string
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	return "\n" + strings.Join(out, "\n")
}

func TestOpenRefusesABadSchemaName(t *testing.T) {
	_, url := newDatabase(t)
	_, err := Open(testContext(t), url, Options{Schema: "hap; DROP TABLE instances"})
	if err == nil || !containsAll(err.Error(), "schema", `"hap; DROP TABLE instances"`) {
		t.Fatalf("Open with a bad schema: %v; want an error naming the field and the value", err)
	}
}
