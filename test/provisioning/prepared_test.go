package provisioning_test

import (
	"database/sql"
	"fmt"
	"testing"

	_ "github.com/lib/pq" // KEB's driver: every statement it sends unprepared is unnamed

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
)

// Through KEB's own driver and pool (lib/pq, *sql.DB), a Client prepares
// the pick once: the connection holds it named, and after a
// few picks PostgreSQL runs its generic plan instead of planning each pick,
// which was most of a pick's time. Unprepared, lib/pq leaves nothing on the
// connection to find.
func TestKEBsPoolRunsThePickPreparedOnItsGenericPlan(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	b.replace(t, []hap.Candidate{candidate("ga-1", "b-1", 0, 1, limit(100)), candidate("ga-2", "b-2", 0, 1, limit(100))}, nil)
	keb, err := sql.Open("postgres", b.url)
	if err != nil {
		t.Fatal(err)
	}
	defer keb.Close()
	// One connection: the statements it holds are the pool's.
	keb.SetMaxOpenConns(1)
	client := &provisioning.Client{DB: keb}
	for i := range 10 {
		id, ga := fmt.Sprintf("i-%d", i), fmt.Sprintf("ga-%d", i%2+1)
		if err := b.requested(ctx, id, ga); err != nil {
			t.Fatal(err)
		}
		pick, err := client.Propose(ctx, provisioning.Request{InstanceID: id, GlobalAccountID: ga, HyperscalerType: "aws"})
		if err != nil || pick.Binding == "" {
			t.Fatalf("pick %d: %+v, %v", i, pick, err)
		}
	}
	var generic, custom int
	err = keb.QueryRowContext(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement LIKE '%binding_candidates%' AND NOT from_sql`).Scan(&generic, &custom)
	if err == sql.ErrNoRows {
		t.Fatal("after 10 picks KEB's connection holds no prepared pick: each pick was parsed and planned anew")
	}
	if err != nil {
		t.Fatal(err)
	}
	if generic+custom != 10 || generic == 0 {
		t.Errorf("the prepared pick ran %d times on its generic plan and %d on custom ones; want all 10 on it, most on the generic plan", generic, custom)
	}
	// Close releases what the client prepared: nothing is left behind on
	// KEB's connection.
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := keb.QueryRowContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE NOT from_sql`).Scan(&left); err != nil || left != 0 {
		t.Errorf("after Close the connection holds %d prepared statements, %v; want none", left, err)
	}
}
