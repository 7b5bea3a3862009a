package db

import (
	"fmt"
	"sync"
	"testing"
)

func TestMigrateTwiceChangesNothing(t *testing.T) {
	s, dbname := migratedStore(t)
	exec(t, dbname, `INSERT INTO hap.binding_empty_since (binding_name, global_account_id, empty_since) VALUES ('b-1', 'ga-a', now())`)
	if err := s.Migrate(testContext(t)); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	assertMigrated(t, s, "hap")
	var n int
	if err := s.db.Raw("SELECT count(*) FROM hap.binding_empty_since").Scan(&n).Error; err != nil || n != 1 {
		t.Fatalf("rows after the second migration: %d, %v; want the one written before", n, err)
	}
}

// Two pods starting at once both migrate. Without the lock one of them
// would fail on a table the other created; several rounds make that race
// likely to show.
func TestConcurrentMigrationsBothSucceed(t *testing.T) {
	_, url := newDatabase(t)
	for round := range 5 {
		schema := fmt.Sprintf("hap_round_%d", round)
		stores := []*Store{openStore(t, url, Options{Schema: schema}), openStore(t, url, Options{Schema: schema})}
		errs := make([]error, len(stores))
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.Migrate(testContext(t))
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, migrator %d: %v", round, i, err)
			}
		}
		assertMigrated(t, stores[0], schema)
	}
}

func assertMigrated(t *testing.T, s *Store, schema string) {
	t.Helper()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var versions []int
	if err := s.db.Raw("SELECT version FROM " + schema + ".schema_migrations ORDER BY version").Scan(&versions).Error; err != nil {
		t.Fatalf("read versions: %v", err)
	}
	if len(versions) != len(all) {
		t.Fatalf("schema %s records versions %v, want each of %d migrations once", schema, versions, len(all))
	}
	var tables []string
	if err := s.db.Raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name`,
		schema).Scan(&tables).Error; err != nil {
		t.Fatal(err)
	}
	want := "[binding_candidates binding_drift binding_empty_since binding_releases binding_reservations candidate_history candidate_rewrites candidates_computed pool_history recorded_claims schema_migrations shadow_picks snapshot_instances withdrawn_bindings]"
	if fmt.Sprint(tables) != want {
		t.Fatalf("tables in %s: %v, want %s", schema, tables, want)
	}
}

func TestOpenRefusesABadSchemaName(t *testing.T) {
	_, url := newDatabase(t)
	_, err := Open(testContext(t), url, Options{Schema: "hap; DROP TABLE instances"})
	if err == nil || !containsAll(err.Error(), "schema", `"hap; DROP TABLE instances"`) {
		t.Fatalf("Open with a bad schema: %v; want an error naming the field and the value", err)
	}
}
