package provisioning_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// A rewrite reads the table and the recorded claims without locking, then
// writes; ga-b's RecordClaim of b-1 may commit in between. The rewrite's
// snapshot, older than the claim, gives b-1 to ga-a (the stale row ga-b
// takes over, or a binding ga-a had just been given) or leaves it free; its
// writes must not undo the claim: after both commit, b-1's row is ga-b's,
// and b-1's history holds no version the rewrite did not write.
//
// The claim commits at one of two moments: while the rewrite is held
// between its read and its writes (by a lock on the open candidate_history
// row of a-0, which it also changes), or while the rewrite's write of b-1
// waits for the row RecordClaim holds (RecordClaim is itself held, after
// writing b-1's row, by a lock on b-1's withdrawn_bindings row, which it
// deletes last), so that PostgreSQL re-checks the rewrite's statement on the
// row RecordClaim committed.
func TestARewriteKeepsAClaimRecordedSinceItsRead(t *testing.T) {
	a0 := func(effective int) hap.Candidate { return candidate("ga-a", "a-0", effective, 1, limit(10)) }
	for _, tc := range []struct {
		name            string
		before, rewrite []hap.Candidate
	}{
		{"the rewrite updates ga-a's stale row", []hap.Candidate{a0(1), candidate("ga-a", "b-1", 1, 2, limit(10))},
			[]hap.Candidate{a0(2), candidate("ga-a", "b-1", 2, 2, limit(10))}},
		{"the rewrite removes the row of a binding it saw free", []hap.Candidate{a0(1), candidate("ga-a", "b-1", 1, 2, limit(10))},
			[]hap.Candidate{a0(2)}},
		{"the rewrite inserts ga-a's row", []hap.Candidate{a0(1)},
			[]hap.Candidate{a0(2), candidate("ga-a", "b-1", 0, 2, limit(10))}},
	} {
		t.Run(tc.name+", the claim committing before its writes", func(t *testing.T) {
			rewriteAroundAClaim(t, tc.before, tc.rewrite, false)
		})
		t.Run(tc.name+", the claim committing while its write waits", func(t *testing.T) {
			rewriteAroundAClaim(t, tc.before, tc.rewrite, true)
		})
	}
}

// rewriteAroundAClaim fills the table from before, then runs a rewrite to
// rewrite and ga-b's RecordClaim of b-1 interleaved as
// TestARewriteKeepsAClaimRecordedSinceItsRead says: the claim commits while
// the rewrite's write waits when duringWrite, before its writes otherwise.
func rewriteAroundAClaim(t *testing.T, before, rewrite []hap.Candidate, duringWrite bool) {
	b := newBed(t)
	ctx := testContext(t)
	b.replace(t, before, nil)
	if err := b.requested(ctx, "i-b", "ga-b"); err != nil {
		t.Fatal(err)
	}
	history := b.historyOf(t, "b-1")

	hold := holdOpenHistory(t, b, "a-0")
	rewritten := make(chan error, 1)
	go func() { rewritten <- b.store.ReplaceCandidates(ctx, rewrite, nil, time.Now(), ttl) }()
	if err := testbed.WaitForRowLockWait(ctx, b.keb); err != nil {
		t.Fatal(err)
	}
	var claimHold *sql.Tx
	if duringWrite {
		b.exec(t, `INSERT INTO hap.withdrawn_bindings (binding_name, withdrawn_at, reason) VALUES ('b-1', now(), 'test')`)
		claimHold = holdWithdrawal(t, b, "b-1")
	}
	client := &provisioning.Client{DB: b.keb, Timeout: time.Minute}
	defer client.Close()
	claimed := make(chan error, 1)
	go func() {
		claimed <- client.RecordClaim(ctx, provisioning.Claim{
			Request:     provisioning.Request{InstanceID: "i-b", GlobalAccountID: "ga-b", HyperscalerType: "aws"},
			BindingName: "b-1", Limit: limit(10),
		})
	}()
	if duringWrite {
		// RecordClaim holds b-1's row and waits for the withdrawal; the
		// rewrite, let go, waits for b-1's row; then the claim commits.
		if err := testbed.WaitForRowLockWaits(ctx, b.keb, 2); err != nil {
			t.Fatal(err)
		}
		if err := hold.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := waitForALockChain(ctx, b.keb); err != nil {
			t.Fatal(err)
		}
		if err := claimHold.Rollback(); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := <-claimed; err != nil {
			t.Fatalf("RecordClaim while the rewrite was held: %v", err)
		}
		claimed <- nil
		if err := hold.Rollback(); err != nil {
			t.Fatal(err)
		}
	}
	if rewriteErr, claimErr := <-rewritten, <-claimed; rewriteErr != nil || claimErr != nil {
		t.Fatalf("the rewrite: %v; RecordClaim: %v", rewriteErr, claimErr)
	}

	rows, err := b.store.Candidates(ctx, "ga-b")
	if err != nil || len(rows) != 1 || rows[0].BindingName != "b-1" || rows[0].Reserved != 1 {
		t.Fatalf("ga-b's rows after the rewrite: %+v, %v; want b-1, claimed while the rewrite ran, with i-b reserved", rows, err)
	}
	if got := b.historyOf(t, "b-1"); got != history {
		t.Fatalf("b-1's history: %q after the rewrite, %q before; the rewrite wrote no row of b-1", got, history)
	}
}

// historyOf renders binding's versions in candidate_history, oldest first.
func (b *bed) historyOf(t *testing.T, binding string) string {
	t.Helper()
	var out string
	err := b.keb.QueryRowContext(testContext(t), `SELECT coalesce(string_agg(format('%s/%s %s..%s', global_account_id,
		effective_count, valid_from, coalesce(valid_to::text, 'open')), '; ' ORDER BY valid_from), '')
		FROM hap.candidate_history WHERE binding_name = $1`, binding).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// holdWithdrawal locks binding's withdrawn_bindings row in a transaction of
// its own, which the caller ends: RecordClaim of the binding, which deletes
// that row after writing the binding's candidate row, waits for it holding
// the candidate row.
func holdWithdrawal(t *testing.T, b *bed, binding string) *sql.Tx {
	t.Helper()
	return holdRow(t, b, `SELECT 1 FROM hap.withdrawn_bindings WHERE binding_name = $1 FOR UPDATE`, binding)
}

// waitForALockChain returns once a statement waits for a transaction that
// itself waits: here the rewrite for RecordClaim, which waits for the
// withdrawal held. Counting waits cannot tell that moment from the one
// before, when the rewrite still waited for the history row just released.
func waitForALockChain(ctx context.Context, db *sql.DB) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var chained bool
		if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity a,
			unnest(pg_blocking_pids(a.pid)) p WHERE a.datname = current_database()
			AND cardinality(pg_blocking_pids(p)) > 0)`).Scan(&chained); err != nil || chained {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
