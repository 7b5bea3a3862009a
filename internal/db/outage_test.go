package db

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestStatementTimeoutBoundsEveryStatement(t *testing.T) {
	_, url := newDatabase(t)
	s := openStore(t, url, Options{StatementTimeout: 100 * time.Millisecond})
	err := s.db.WithContext(testContext(t)).Exec("SELECT pg_sleep(30)").Error
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("a statement longer than the timeout: %v; want query_canceled (57014)", err)
	}
}

func TestOptionsRefuseNegativeValues(t *testing.T) {
	for _, opts := range []Options{{ConnectTimeout: -time.Second}, {StatementTimeout: -time.Second}, {MaxOpenConns: 1}} {
		if _, err := opts.withDefaults(); err == nil {
			t.Errorf("%+v accepted", opts)
		}
	}
}

// The server goes down and comes back, as in a database failover. Calls
// during and right after may fail, but with an error that hides the
// password, and the same Store works again once the server is back.
func TestStoreWorksAgainAfterARestart(t *testing.T) {
	dbname, _ := newDatabase(t)
	role := dbname + "_job"
	if err := pg.CreateRole(testContext(t), role, rightPassword); err != nil {
		t.Fatal(err)
	}
	exec(t, dbname, "GRANT CREATE ON DATABASE "+dbname+" TO "+role+"; GRANT SELECT ON instances TO "+role)
	s := openStore(t, pg.RoleURL(role, rightPassword, dbname), Options{})
	ctx := testContext(t)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	insertInstances(t, dbname, instance{id: "i-1", runtimeID: "r-1", ga: "ga-a", binding: str("b-1")})
	if _, err := s.ReadInstanceCounts(ctx); err != nil {
		t.Fatal(err)
	}

	if err := pg.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}

	deadline, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		read, err := s.ReadInstanceCounts(deadline)
		if err == nil {
			if len(read.Counts) != 1 || read.Counts[0].Active != 1 {
				t.Fatalf("counts after the restart: %+v", read.Counts)
			}
			return
		}
		assertNoSecret(t, err.Error(), rightPassword)
		if deadline.Err() != nil {
			t.Fatalf("the store did not recover: %v", err)
		}
	}
}
