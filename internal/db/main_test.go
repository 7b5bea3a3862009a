package db

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// pg is one throwaway cluster for the package; every test gets databases of
// its own in it.
var pg *testbed.Postgres

func TestMain(m *testing.M) { testbed.Main(m, testbed.Setup{Postgres: &pg}) }

func testContext(t *testing.T) context.Context {
	return testbed.Context(t, 2*time.Minute)
}

var databaseSeq atomic.Int64

// newDatabase creates a database holding an empty KEB instances table and
// returns its name and superuser URL.
func newDatabase(t *testing.T) (name, url string) {
	t.Helper()
	name = fmt.Sprintf("db_test_%d", databaseSeq.Add(1))
	url, err := pg.NewDatabase(testContext(t), name)
	if err != nil {
		t.Fatalf("create database: %v", err)
	}
	return name, url
}

func openStore(t *testing.T, url string, opts Options) *Store {
	t.Helper()
	s, err := Open(testContext(t), url, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// migratedStore is a Store on a fresh database with the job's schema in place.
func migratedStore(t *testing.T) (*Store, string) {
	t.Helper()
	name, url := newDatabase(t)
	s := openStore(t, url, Options{})
	if err := s.Migrate(testContext(t)); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s, name
}

func exec(t *testing.T, dbname, sql string, args ...any) {
	t.Helper()
	if err := pg.Exec(testContext(t), dbname, sql, args...); err != nil {
		t.Fatal(err)
	}
}

// instance is a row of KEB's table; nil pointers are stored as NULL.
type instance struct {
	id, runtimeID, ga string
	subscriptionGA    *string
	binding           *string
	deleted           bool
}

func str(s string) *string { return &s }

// insertInstances writes rows the way KEB does: an active row leaves
// deleted_at to its column default, the zero time.
func insertInstances(t *testing.T, dbname string, rows ...instance) {
	t.Helper()
	for _, r := range rows {
		columns, values := "", ""
		args := []any{r.id, r.runtimeID, r.ga, r.subscriptionGA, r.binding}
		if r.deleted {
			columns, values = ", deleted_at", ", $6"
			args = append(args, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
		}
		exec(t, dbname, `INSERT INTO instances (instance_id, runtime_id, global_account_id,
			subscription_global_account_id, subscription_secret_name, provisioning_parameters,
			created_at, updated_at`+columns+`) VALUES ($1, $2, $3, $4, $5, '{}', now(), now()`+values+`)`, args...)
	}
}
