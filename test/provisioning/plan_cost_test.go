package provisioning_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// With KEB's table at XL size (400,000 instance rows, as KEB keeps its
// deleted ones) and thousands of them created in the last hour by other
// GAs, a pick reads KEB's table through KEB's index alone, once per
// candidate binding of the GA: never a scan of the table, and nothing that
// grows with what other GAs do. Its estimate stays far below
// jit_above_cost (a plan above it is compiled on every pick, some 80 ms at
// XL), and a prepared pick keeps its generic plan: no parameter decides
// the plan's shape.
func TestAPickReadsKEBsTableThroughItsIndexAtXL(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	b.replace(t, []hap.Candidate{candidate("ga-1", "b-1", 1, 1, limit(10)), candidate("ga-1", "b-2", 0, 2, limit(10))}, nil)
	b.exec(t, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
		provisioning_parameters, created_at, updated_at, deleted_at)
		SELECT 'old-' || g, 'r-' || g, 'ga-' || (g % 20000), 'b-' || (g % 30000), '{}',
		       now() - make_interval(days => 1 + g % 700), now() - make_interval(days => g % 700),
		       CASE WHEN g % 4 = 0 THEN now() - make_interval(days => g % 500) ELSE '0001-01-01 00:00:00+00' END
		FROM generate_series(1, 400000) g`)
	b.exec(t, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
		provisioning_parameters, created_at, updated_at)
		SELECT 'new-' || g, 'rn-' || g, 'ga-x' || (g % 5000), 'bx-' || (g % 3000), '{}', now() - make_interval(secs => g % 3600), now()
		FROM generate_series(1, 20000) g`)
	b.exec(t, `ANALYZE instances`)

	dedicated, _ := pickStatements(t)
	conn, err := b.keb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const prepare = "PREPARE pick (text, text, boolean, text, float8, boolean, integer, integer, float8) AS "
	const execute = `EXECUTE pick ('i-new-%d', 'aws', false, 'ga-%d', 1800, false, 10, 0, NULL)`
	explain := func(what string) (float64, string) {
		t.Helper()
		var plan []byte
		if err := conn.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+fmt.Sprintf(execute, 0, 1)).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		var explained []struct {
			Plan struct {
				TotalCost float64 `json:"Total Cost"`
			} `json:"Plan"`
		}
		if err := json.Unmarshal(plan, &explained); err != nil || len(explained) != 1 {
			t.Fatalf("EXPLAIN %s: %s, %v", what, plan, err)
		}
		return explained[0].Plan.TotalCost, string(plan)
	}
	// KEB's driver (lib/pq) sends each pick as an unnamed statement, which
	// PostgreSQL plans with the values given: a custom plan.
	for _, stmt := range []string{"SET plan_cache_mode = force_custom_plan", prepare + dedicated} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	var jitAbove float64
	if err := conn.QueryRowContext(ctx, `SELECT current_setting('jit_above_cost')::float8`).Scan(&jitAbove); err != nil {
		t.Fatal(err)
	}
	cost, plan := explain("custom")
	if cost > jitAbove/10 {
		t.Errorf("a pick's estimated cost is %.0f at 400,000 instances, want at most a tenth of jit_above_cost (%.0f)", cost, jitAbove)
	}
	if !strings.Contains(plan, schema.KEBIndexName) || seqScansInstances(plan) {
		t.Errorf("the pick does not read KEB's table through %s alone:\n%s", schema.KEBIndexName, plan)
	}

	// A driver that prepares the statement (pgx's statement cache, or a
	// Client on KEB's pool) runs it named: after five custom plans
	// PostgreSQL keeps the generic plan when its estimate is no worse.
	for _, stmt := range []string{"SET plan_cache_mode = auto", "DEALLOCATE pick", prepare + dedicated} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(execute, i, i%2+1)); err != nil {
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

// seqScansInstances says whether a JSON plan reads KEB's instances table
// by a sequential scan.
func seqScansInstances(plan string) bool {
	var nodes []map[string]any
	if err := json.Unmarshal([]byte(plan), &nodes); err != nil {
		return true
	}
	var walk func(n map[string]any) bool
	walk = func(n map[string]any) bool {
		if n["Node Type"] == "Seq Scan" && n["Relation Name"] == "instances" {
			return true
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok && walk(m) {
				return true
			}
		}
		return false
	}
	for _, n := range nodes {
		if p, ok := n["Plan"].(map[string]any); ok && walk(p) {
			return true
		}
	}
	return false
}
