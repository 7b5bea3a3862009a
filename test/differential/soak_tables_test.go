package differential

import (
	"fmt"
	"strings"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/soak"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// soakJobs must each succeed again after every restart: all of serve's.
var soakJobs = jobs.AllJobs

// The soak's pools a claim lease can be held for: the dedicated ones and
// the shared ones, whose picks take none but bound it all the same.
const soakPools = 4

// tablesOverLandscape names the tables keyed by the landscape that hold
// more rows than it has keys (docs/operations.md#what-the-tables-hold): a
// row per binding, per GA and pool, or a single row; "" when none does.
func tablesOverLandscape(values map[string]float64, bindings int) string {
	bounds := map[string]int{
		"binding_candidates":        bindings,
		"recorded_claims":           bindings,
		"withdrawn_bindings":        bindings,
		"binding_empty_since":       bindings,
		"claim_leases":              len(globalAccounts) * soakPools,
		"candidates_computed":       1,
		"hap_reconciler_migrations": 1,
	}
	var over []string
	for table, bound := range bounds {
		if n := values[soak.TableRowsPrefix+table]; n > float64(bound) {
			over = append(over, fmt.Sprintf("%s %v rows, bound %d", table, n, bound))
		}
	}
	return strings.Join(over, "; ")
}

// pruneSlack is how much older than its retention a row may be before
// the retention step forgets it: the step runs at most once a minute
// (jobs.tidyEvery), after the run it ends.
const pruneSlack = 90 * time.Second

// checkTables holds every table to its bound: none of those keyed by the
// landscape was ever over it, and each that records what happened holds
// nothing older than its retention (and the step's slack), apart from
// what the bound keeps: the newest rewrite, a binding's open release
// intent.
func (r *soakRun) checkTables() {
	t := r.t
	t.Helper()
	if len(r.overBound) > 0 {
		t.Errorf("tables over the landscape's bound:\n%s", strings.Join(r.overBound, "\n"))
	}
	keep := (r.plan.retention + pruneSlack).Seconds()
	bindings := len(r.s.sc.Landscape.Bindings)
	checks := []struct {
		table, older string
		allowed      int
	}{
		{"binding_drift", "resolved_at", 0},
		{"binding_releases", "created_at", bindings},
		{"candidate_history", "valid_to", 0},
		{"candidate_rewrites", "written_at", 1},
		{"shadow_picks", "picked_at", 0},
		{"pool_history", "recorded_at", 0},
		{"binding_reservations", "reserved_at", 0},
		{"claim_leases", "expires_at", 0},
	}
	schema := r.s.sc.Config.Database.Schema
	testbed.Eventually(t, 3*time.Minute, "every table to hold nothing older than its retention", func() (bool, string) {
		for _, c := range checks {
			var n int
			err := r.s.db.QueryRowContext(r.ctx, fmt.Sprintf(`SELECT count(*) FROM %s.%s WHERE %s < now() - make_interval(secs => $1)`,
				schema, c.table, c.older), keep).Scan(&n)
			if err != nil {
				return false, err.Error()
			}
			if n > c.allowed {
				return false, fmt.Sprintf("%s: %d rows older than %.0fs by %s, at most %d allowed", c.table, n, keep, c.older, c.allowed)
			}
		}
		return true, ""
	})
}
