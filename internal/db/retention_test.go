package db

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// day is one run of the compressed time below: after each run every
// timestamp of the job's schema moves back by a day, as if the database's
// clock had moved on by one.
const day = 24 * time.Hour

// TestEveryTableStaysWithinItsBoundOverManyRuns runs the writes of every
// job (findings opened and resolved, releases audited, the candidate table
// rewritten with a change each time, shadow picks, claims, withdrawals,
// leases, pool samples) and the retention step 120 times, a day apart, and
// holds every table to the bound docs/operations.md states: what the
// landscape holds, plus what each retention keeps. It also holds what must
// stay whatever its age: an open finding, an open release intent, the open
// version of a row that never changes, an unexpired lease.
func TestEveryTableStaysWithinItsBoundOverManyRuns(t *testing.T) {
	s, dbname := migratedStore(t)
	ctx := testContext(t)
	keep := hap.Retention{ResolvedFindings: 10*day + day/2, ReleaseAudit: 20*day + day/2, ShadowHistory: 15*day + day/2}
	aws := hap.Pool{HyperscalerType: "aws"}
	const bindings, runs = 6, 120
	name := func(i int) string { return fmt.Sprintf("b-%d", i%bindings) }

	stuck := hap.Finding{BindingName: "b-stuck", GlobalAccountID: "ga-a", Pool: aws, Kind: hap.KindCountMismatch, DBCount: 1}
	openIntent, err := s.RecordRelease(ctx, hap.ReleaseRecord{BindingName: "b-stuck", GlobalAccountID: "ga-a", Pool: aws, Mode: "dirty",
		Reason: "a run that ended before it recorded what came of it", Outcome: hap.OutcomeIntent, ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, bindings)
	for i := range runs {
		now, err := s.DatabaseTime(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Drift: b-stuck stays open throughout; one more binding's finding
		// opens each run, and the previous run's resolves.
		moving := hap.Finding{BindingName: name(i), GlobalAccountID: "ga-a", Pool: aws, Kind: hap.KindCountMismatch, DBCount: i}
		if _, err := s.RecordFindings(ctx, []hap.Finding{stuck, moving}, now); err != nil {
			t.Fatal(err)
		}
		// Release: an intent and its outcome each run.
		intent, err := s.RecordRelease(ctx, hap.ReleaseRecord{BindingName: name(i), GlobalAccountID: "ga-a", Pool: aws, Mode: "dirty",
			Reason: "empty", Outcome: hap.OutcomeIntent, ResourceVersion: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordRelease(ctx, hap.ReleaseRecord{BindingName: name(i), GlobalAccountID: "ga-a", Pool: aws, Mode: "dirty",
			Reason: "empty", Outcome: hap.OutcomeReleased, IntentID: intent}); err != nil {
			t.Fatal(err)
		}
		// KEB: a pick whose instance never shows, a claim recorded, a
		// binding withdrawn, a lease of a GA of its own.
		exec(t, dbname, `INSERT INTO hap.binding_reservations (instance_id, binding_name, global_account_id, hyperscaler_type, eu_access)
			VALUES ($1, 'b-still', 'ga-a', 'aws', false)`, fmt.Sprintf("never-%d", i))
		// Both are dated before this run's clock reading, not by now(): the
		// withdrawal must be older than the moment the rewrite below ends
		// withdrawals before, however long a loaded machine took to get here.
		exec(t, dbname, `INSERT INTO hap.recorded_claims VALUES ($1, 'ga-a', 'aws', false, $2::timestamptz - interval '1 second')
			ON CONFLICT (binding_name) DO UPDATE SET claimed_at = excluded.claimed_at`, name(i), now)
		exec(t, dbname, `INSERT INTO hap.withdrawn_bindings VALUES ($1, $2::timestamptz - interval '1 second', 'test')
			ON CONFLICT (binding_name) DO UPDATE SET withdrawn_at = excluded.withdrawn_at`, name(i+1), now)
		exec(t, dbname, `INSERT INTO hap.claim_leases VALUES ($1, 'aws', false, 'claiming', now() + interval '30 minutes')`, fmt.Sprintf("ga-%d", i))
		// Candidates: one row's count changes each run (from run 1 on);
		// b-still never does.
		counts[i%bindings] = i
		rows := []hap.Candidate{{GlobalAccountID: "ga-a", Pool: aws, BindingName: "b-still", Selectable: true, Rank: 1}}
		for b, count := range counts {
			rows = append(rows, hap.Candidate{GlobalAccountID: "ga-a", Pool: aws, BindingName: name(b), DBCount: count, EffectiveCount: count,
				Selectable: true, Rank: b + 2})
		}
		if err := s.ReplaceCandidates(ctx, rows, nil, now, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EndWithdrawals(ctx, now, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordShadow(ctx, []hap.ShadowResult{{InstanceID: fmt.Sprintf("i-%d", i), GlobalAccountID: "ga-a", Pool: aws,
			KEBBinding: name(i), Table: name(i), Outcome: "agree", At: now}}, keep.ShadowHistory-time.Minute, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordPoolSamples(ctx, now, []hap.PoolStats{{PoolKey: hap.PoolKey{Pool: aws}, Free: i}}, hap.PoolHistoryRetention); err != nil {
			t.Fatal(err)
		}

		if err := s.PruneTables(ctx, keep); err != nil {
			t.Fatal(err)
		}
		got, err := s.TableRows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Run i wrote one resolved finding, two audit rows, one closed
		// version, one rewrite, one compared pick per day from day 1 on:
		// after day d (0-based) the rows of the last min(d, keep) days are
		// kept, and no older ones.
		within := func(keep time.Duration, d int) int64 { return int64(min(d, int(keep/day)+1)) }
		want := map[string]int64{
			"binding_drift":             2 + within(keep.ResolvedFindings, i),         // b-stuck and this run's open, the resolved
			"binding_releases":          1 + 2*within(keep.ReleaseAudit, i+1),         // the open intent, two rows a run
			"candidate_history":         bindings + 1 + within(keep.ShadowHistory, i), // the open versions, the closed
			"candidate_rewrites":        within(keep.ShadowHistory, i+1),
			"shadow_picks":              within(keep.ShadowHistory, i+1),
			"pool_history":              within(hap.PoolHistoryRetention-day, i+1),
			"binding_candidates":        bindings + 1,
			"binding_reservations":      1, // this run's; the rewrite drops it after its TTL
			"recorded_claims":           1, // this run's; the next rewrite's snapshot shows it and ends it
			"withdrawn_bindings":        0,
			"claim_leases":              1, // this run's lease, not yet expired
			"candidates_computed":       1,
			"binding_empty_since":       0,
			"hap_reconciler_migrations": 1,
		}
		if !maps.Equal(got, want) {
			t.Fatalf("after run %d the tables hold %v\nwant %v", i, got, want)
		}
		advanceClock(t, s, day)
	}

	// What nothing else keeps stays whatever its age: the open finding,
	// the open intent, b-still's open version, the newest rewrite.
	advanceClock(t, s, 1000*day)
	if err := s.PruneTables(ctx, keep); err != nil {
		t.Fatal(err)
	}
	open, err := s.OpenFindings(ctx, "ga-a")
	if err != nil || !slices.ContainsFunc(open, func(f hap.OpenFinding) bool { return f.BindingName == "b-stuck" }) {
		t.Errorf("open findings %v, %v: want b-stuck's, open since the first run", open, err)
	}
	intents, err := s.OpenReleaseIntents(ctx)
	if err != nil || len(intents) != 1 || intents[0].ID != openIntent {
		t.Errorf("open intents %v, %v: want %d alone", intents, err, openIntent)
	}
	got, err := s.TableRows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["binding_releases"] != 1 || got["candidate_history"] != bindings+1 || got["candidate_rewrites"] != 1 ||
		got["shadow_picks"] != 0 || got["claim_leases"] != 0 || got["binding_drift"] != 2 {
		t.Errorf("after 1,000 quiet days the tables hold %v; want the open intent, the %d open versions, the newest rewrite and the 2 open findings", got, bindings+1)
	}
}

// TestTableRowsCountsEveryTableOfTheSchema holds the metric of each table's
// rows to the schema: a table a migration adds is counted, and bounded in
// docs/operations.md, or this fails.
func TestTableRowsCountsEveryTableOfTheSchema(t *testing.T) {
	s, _ := migratedStore(t)
	var tables []string
	if err := s.db.Raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'hap' ORDER BY table_name`).Scan(&tables).Error; err != nil {
		t.Fatal(err)
	}
	got, err := s.TableRows(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if counted := slices.Sorted(maps.Keys(got)); !slices.Equal(counted, tables) {
		t.Errorf("TableRows counts %v; the schema holds %v", counted, tables)
	}
}

// advanceClock moves every timestamp of the job's schema back by d: to the
// statements, which compare with now(), d has passed.
func advanceClock(t *testing.T, s *Store, d time.Duration) {
	t.Helper()
	var columns []struct{ Table, Column string }
	if err := s.db.Raw(`SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns
		WHERE table_schema = 'hap' AND data_type = 'timestamp with time zone'`).Scan(&columns).Error; err != nil {
		t.Fatal(err)
	}
	for _, c := range columns {
		if err := s.db.Exec(fmt.Sprintf(`UPDATE hap.%s SET %s = %[2]s - make_interval(secs => %f)`, c.Table, c.Column, d.Seconds())).Error; err != nil {
			t.Fatal(err)
		}
	}
}
