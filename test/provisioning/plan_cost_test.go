package provisioning_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
)

// With KEB's table at XL size (400,000 instance rows, as KEB keeps its
// deleted ones), the planner's estimate of one pick stays far below
// jit_above_cost (100,000 by default): a plan above it is compiled by JIT
// on every pick, some 80 ms each at XL. The bound the pick reads from the
// table (instances_read_at) is unknown when the statement is planned; the
// second bound on created_at, from now(), is what keeps the estimate of
// KEB's placements since the listing small.
func TestAPickIsPlannedCheaplyOnKEBsTableAtXL(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	b.replace(t, []hap.Candidate{candidate("ga-1", "b-1", 1, 1, limit(10)), candidate("ga-1", "b-2", 0, 2, limit(10))}, nil)
	b.exec(t, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
		provisioning_parameters, created_at, updated_at, deleted_at)
		SELECT 'old-' || g, 'r-' || g, 'ga-' || (g % 20000), 'b-' || (g % 30000), '{}',
		       now() - make_interval(days => 1 + g % 700), now() - make_interval(days => g % 700),
		       CASE WHEN g % 4 = 0 THEN now() - make_interval(days => g % 500) ELSE '0001-01-01 00:00:00+00' END
		FROM generate_series(1, 400000) g`)
	b.exec(t, `ANALYZE instances`)

	query, err := provisioning.NextBindingSQL(provisioning.DefaultSchema)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := b.keb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// KEB's driver (lib/pq) sends each pick as an unnamed statement, which
	// PostgreSQL plans with the values given: a custom plan.
	for _, stmt := range []string{
		"SET plan_cache_mode = force_custom_plan",
		"PREPARE pick (text, text, text, boolean, float8, boolean, boolean, integer, integer, float8) AS " + query,
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	var plan []byte
	if err := conn.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) EXECUTE pick ('i-new', 'ga-1', 'aws', false, 1800, false, false, 0, 0, 600)`).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	var explained []struct {
		Plan struct {
			TotalCost float64 `json:"Total Cost"`
		} `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &explained); err != nil || len(explained) != 1 {
		t.Fatalf("EXPLAIN: %s, %v", plan, err)
	}
	var jitAbove float64
	if err := conn.QueryRowContext(ctx, `SELECT current_setting('jit_above_cost')::float8`).Scan(&jitAbove); err != nil {
		t.Fatal(err)
	}
	if cost := explained[0].Plan.TotalCost; cost > jitAbove/10 {
		t.Errorf("a pick's estimated cost is %.0f at 400,000 instances, want at most a tenth of jit_above_cost (%.0f)", cost, jitAbove)
	}

	// A driver that prepares the statement (pgx's statement cache, or
	// database/sql's Prepare) runs it as a named statement: after five
	// custom plans PostgreSQL keeps the generic plan when its estimate is
	// no worse, and then no pick is planned again. Planning was most of a
	// pick; the generic plan must be chosen, and cheap.
	for _, stmt := range []string{"SET plan_cache_mode = auto", "DEALLOCATE pick",
		"PREPARE pick (text, text, text, boolean, float8, boolean, boolean, integer, integer, float8) AS " + query} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(`EXECUTE pick ('i-new-%d', 'ga-%d', 'aws', false, 1800, false, false, 0, 0, 600)`, i, i%2+1)); err != nil {
			t.Fatal(err)
		}
	}
	var generic, custom int
	if err := conn.QueryRowContext(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'pick'`).Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if generic == 0 {
		t.Errorf("8 executions of the prepared pick: %d generic plans, %d custom ones; want PostgreSQL to keep the generic plan", generic, custom)
	}
}
