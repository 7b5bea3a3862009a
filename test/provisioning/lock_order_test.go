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

// The job's rewrite and KEB's RecordClaim lock in one order: a binding's
// candidate row first, then what else they write of it (the claim's record,
// the reservations on it). RecordClaim's statement locks the row and then
// writes recorded_claims and drops other GAs' reservations on the binding; a
// rewrite that ended a settled claim or dropped an expired reservation of the
// binding first, and changed the binding's row after, deadlocked with it
// (SQLSTATE 40P01, once in test/confirm's upgrade run).
//
// The interleaving is forced, step by step: the rewrite is stopped between
// reading the table and changing its rows by a lock on the binding's open
// candidate_history row, which the rewrite closes in between; RecordClaim
// runs meanwhile; then the rewrite is let go. Both must succeed, and the
// claim recorded while the rewrite ran must stay recorded.
func TestARewriteAndARecordClaimOfItsBindingDoNotDeadlock(t *testing.T) {
	for _, tc := range []struct{ name, sideRow string }{
		{"the rewrite ends a claim recorded an hour ago", `INSERT INTO hap.recorded_claims
			(binding_name, global_account_id, hyperscaler_type, eu_access, claimed_at)
			VALUES ('a-1', 'ga-a', 'aws', false, now() - interval '1 hour')`},
		{"the rewrite drops another GA's reservation past its TTL", `INSERT INTO hap.binding_reservations
			(instance_id, binding_name, global_account_id, hyperscaler_type, eu_access, reserved_at)
			VALUES ('i-gone', 'a-1', 'ga-a', 'aws', false, now() - interval '2 hours')`},
	} {
		t.Run(tc.name, func(t *testing.T) { rewriteBesideARecordClaim(t, tc.sideRow) })
	}
}

// rewriteBesideARecordClaim runs a rewrite that changes a-1's row and a
// RecordClaim of a-1 interleaved as TestARewriteAndARecordClaimOfItsBindingDoNotDeadlock
// says, with sideRow, what the rewrite drops of a-1, in the table first.
func rewriteBesideARecordClaim(t *testing.T, sideRow string) {
	b := newBed(t)
	ctx := testContext(t)
	// ga-a held a-1; the account was cleaned and ga-b claims it now, while
	// a rewrite from a snapshot before the claim changes a-1's counts.
	b.replace(t, []hap.Candidate{candidate("ga-a", "a-1", 1, 1, limit(10))}, nil)
	b.exec(t, sideRow)
	if err := b.requested(ctx, "i-b", "ga-b"); err != nil {
		t.Fatal(err)
	}

	hold := holdOpenHistory(t, b, "a-1")
	rewrite := make(chan error, 1)
	go func() {
		rewrite <- b.store.ReplaceCandidates(ctx, []hap.Candidate{candidate("ga-a", "a-1", 2, 1, limit(10))}, nil, time.Now(), ttl)
	}()
	if err := testbed.WaitForRowLockWait(ctx, b.keb); err != nil {
		t.Fatal(err)
	}

	// A Client whose timeout outlasts PostgreSQL's deadlock check, so that
	// a deadlock is what ends a stuck call, never the timeout.
	client := &provisioning.Client{DB: b.keb, Timeout: time.Minute}
	defer client.Close()
	claimed := make(chan error, 1)
	go func() {
		claimed <- client.RecordClaim(ctx, provisioning.Claim{
			Request:     provisioning.Request{InstanceID: "i-b", GlobalAccountID: "ga-b", HyperscalerType: "aws"},
			BindingName: "a-1", Limit: limit(10),
		})
	}()
	// RecordClaim either goes through while the rewrite is held, or waits
	// for the rewrite (a second statement waiting on a row); only then is
	// the rewrite let go, so that it meets the waiting claim.
	claimErr, claimDone := claimOrItsWait(ctx, t, b.keb, claimed)
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	rewriteErr := <-rewrite
	if !claimDone {
		claimErr = <-claimed
	}
	if rewriteErr != nil || claimErr != nil {
		t.Fatalf("the rewrite: %v; RecordClaim (done while the rewrite was held: %t): %v", rewriteErr, claimDone, claimErr)
	}
	var kept bool
	if err := b.keb.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM hap.recorded_claims
		WHERE binding_name = 'a-1' AND global_account_id = 'ga-b')`).Scan(&kept); err != nil || !kept {
		t.Fatalf("ga-b's claim of a-1, recorded while the rewrite ran, after it: kept %t, %v", kept, err)
	}
}

// holdOpenHistory locks binding's open candidate_history row in a
// transaction of its own, which the caller ends: a rewrite that changes the
// binding's row stops at closing that version, after the statements before
// it and before it changes any candidate row.
func holdOpenHistory(t *testing.T, b *bed, binding string) *sql.Tx {
	t.Helper()
	return holdRow(t, b, `SELECT 1 FROM hap.candidate_history WHERE binding_name = $1 AND valid_to IS NULL FOR UPDATE`, binding)
}

// holdRow runs lockOne, a SELECT ... FOR UPDATE of binding's one row, in a
// transaction of its own, which the caller ends.
func holdRow(t *testing.T, b *bed, lockOne, binding string) *sql.Tx {
	t.Helper()
	ctx := testContext(t)
	tx, err := b.keb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (`+lockOne+`) v`, binding).Scan(&n); err != nil || n != 1 {
		t.Fatalf("lock %q of %s: %d rows, %v", lockOne, binding, n, err)
	}
	return tx
}

// claimOrItsWait returns once the call answering on claimed has returned
// (its error, true) or waits on a row beside the held rewrite (nil, false).
func claimOrItsWait(ctx context.Context, t *testing.T, keb *sql.DB, claimed <-chan error) (error, bool) {
	t.Helper()
	waitCtx, stop := context.WithCancel(ctx)
	defer stop()
	waited := make(chan error, 1)
	go func() { waited <- testbed.WaitForRowLockWaits(waitCtx, keb, 2) }()
	select {
	case err := <-claimed:
		return err, true
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
		return nil, false
	}
}

// A pick locks candidate rows in its own order, KEB's counts of the moment:
// it waits for the first row in that order while another pick fills it,
// keeps that row locked when the re-check of the limit then fails, and goes
// on to the next. A rewrite that changes both rows in the other order
// deadlocks with it, and no order of the rewrite's own avoids that; the
// rewrite PostgreSQL ends is run again and goes through, and the pick is
// answered. The pick's session checks for deadlocks later than the
// rewrite's, so that PostgreSQL ends the rewrite, as in test/confirm's
// upgrade run, rather than the pick.
func TestARewriteEndedByADeadlockWithAPickIsRunAgain(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	// a-1 comes first in the pick's order (the most populated, one slot
	// left), a-2 next.
	b.replace(t, []hap.Candidate{candidate("ga-a", "a-1", 2, 1, limit(3)), candidate("ga-a", "a-2", 0, 2, limit(3))}, nil)
	for _, id := range []string{"i-1", "i-2"} {
		if err := b.requested(ctx, id, "ga-a"); err != nil {
			t.Fatal(err)
		}
	}
	// A pick that takes a-1's last slot and has not committed yet.
	filling, err := b.keb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = filling.Rollback() }()
	if got, err := testbed.Propose(ctx, filling, provisioning.Request{InstanceID: "i-2", GlobalAccountID: "ga-a", HyperscalerType: "aws"}); err != nil || got.Binding != "a-1" {
		t.Fatalf("the pick filling a-1: %+v, %v", got, err)
	}

	picked := make(chan pickAnswer, 1)
	go func() { picked <- pickWithLateDeadlockCheck(ctx, b, "i-1", "ga-a") }()
	if err := testbed.WaitForRowLockWaits(ctx, b.keb, 1); err != nil {
		t.Fatal(err)
	}
	// The rewrite removes a-2 (its first statement of rows) and changes
	// a-1, for which it waits too.
	rewrite := make(chan error, 1)
	go func() {
		rewrite <- b.store.ReplaceCandidates(ctx, []hap.Candidate{candidate("ga-a", "a-1", 2, 5, limit(3))}, nil, time.Now(), ttl)
	}()
	if err := testbed.WaitForRowLockWaits(ctx, b.keb, 2); err != nil {
		t.Fatal(err)
	}
	if err := filling.Commit(); err != nil {
		t.Fatal(err)
	}
	rewriteErr, pick := <-rewrite, <-picked
	if rewriteErr != nil || pick.err != nil || pick.binding != "a-2" {
		t.Fatalf("the rewrite: %v; the pick: %q, %v (want a-2, a-1 being full)", rewriteErr, pick.binding, pick.err)
	}
	rows, err := b.store.Candidates(ctx, "ga-a")
	if err != nil || len(rows) != 1 || rows[0].BindingName != "a-1" || rows[0].Rank != 5 {
		t.Fatalf("the table after the rewrite: %+v, %v; want a-1 alone, rank 5", rows, err)
	}
}

type pickAnswer struct {
	binding string
	err     error
}

// pickWithLateDeadlockCheck picks for instance in ga on a session whose
// deadlock check comes a minute after it starts waiting.
func pickWithLateDeadlockCheck(ctx context.Context, b *bed, instance, ga string) pickAnswer {
	conn, err := b.keb.Conn(ctx)
	if err != nil {
		return pickAnswer{err: err}
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET deadlock_timeout = '1min'"); err != nil {
		return pickAnswer{err: err}
	}
	client := &provisioning.Client{DB: conn, Timeout: 2 * time.Minute}
	defer client.Close()
	p, err := client.Propose(ctx, provisioning.Request{InstanceID: instance, GlobalAccountID: ga, HyperscalerType: "aws"})
	return pickAnswer{binding: p.Binding, err: err}
}
