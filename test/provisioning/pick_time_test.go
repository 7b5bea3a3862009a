package provisioning_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// The tests of this file are the cases where the table's snapshot and the
// moment KEB asks differ: KEB acted in between, and the pick must answer
// what KEB's live path answers then.

// KEB placed a cluster on its live path after the snapshot (the fall-back
// on ErrStale, a timeout, a replica not yet switched): the binding is full
// by KEB's own count now and must not be picked.
func TestALivePlacementSinceTheSnapshotCounts(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 9, 1, limit(10))}, nil)
	b.writeInstance(t, "live-1", "ga-a", "b-1")

	pick, err := testbed.Propose(testContext(t), b.keb, provisioning.Request{
		InstanceID: "i-1", GlobalAccountID: "ga-a", HyperscalerType: "aws",
	})
	if err != nil || !pick.ClaimNew || len(pick.Held) != 1 {
		t.Fatalf("pick after a live placement filled b-1 to its limit of 10: %+v, %v; want ClaimNew holding 1", pick, err)
	}
}

// An instance created before the snapshot whose binding KEB wrote after it
// (the resolve step runs later than the provision request) counts too.
func TestABindingWrittenSinceTheSnapshotCounts(t *testing.T) {
	b := newBed(t)
	b.writeInstance(t, "pending-1", "ga-a", "")
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 9, 1, limit(10))}, nil)
	b.exec(t, `UPDATE instances SET subscription_secret_name = 'b-1', created_at = now() - interval '2 hours' WHERE instance_id = 'pending-1'`)

	if _, claimNew, err := b.pick(testContext(t), "i-1", "ga-a"); err != nil || !claimNew {
		t.Fatalf("pick after KEB wrote b-1 into an instance listed without a binding: claimNew %v, %v; want claimNew", claimNew, err)
	}
}

// A cluster deleted since the snapshot frees its place at once: KEB would
// use the binding, so the table must not send KEB off to claim another.
func TestADeletionSinceTheSnapshotFreesItsPlace(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{
		candidate("ga-a", "b-1", 10, 1, limit(10)),
		candidate("ga-a", "b-2", 10, 2, limit(10)),
	}, nil)
	b.exec(t, `UPDATE instances SET deleted_at = now() WHERE instance_id = 'fx-b-2-3'`)
	if got := b.mustPick(t, "i-1", "ga-a"); got != "b-2" {
		t.Fatalf("pick after one of b-2's clusters was deleted: %s, want b-2", got)
	}
	b.exec(t, `DELETE FROM instances WHERE instance_id IN ('fx-b-1-0', 'fx-b-1-1')`)
	// b-1 now holds 8, b-2 10 (9 and the reservation): b-1 is the most
	// populated below the limit.
	if got := b.mustPick(t, "i-2", "ga-a"); got != "b-1" {
		t.Fatalf("pick after two of b-1's rows were removed: %s, want b-1", got)
	}
}

// KEB claimed a binding and recorded it; the job's next rewrite comes from
// a snapshot taken before the claim and does not list it. The GA's next
// pick must land on the claimed binding, not claim a second one.
func TestARecordedClaimSurvivesARewriteOfAnOlderSnapshot(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-full", 10, 1, limit(10))}, nil)
	before := b.databaseTime(t)
	if err := b.recordClaim(t, "i-1", "ga-a", "b-claimed", limit(10)); err != nil {
		t.Fatal(err)
	}
	rows := []hap.Candidate{candidate("ga-a", "b-full", 10, 1, limit(10))}
	b.seedInstances(t, rows)
	if err := b.store.ReplaceCandidates(testContext(t), rows, nil, before.Add(-time.Minute), ttl); err != nil {
		t.Fatal(err)
	}
	if got := b.mustPick(t, "i-2", "ga-a"); got != "b-claimed" {
		t.Fatalf("pick after a rewrite of a snapshot older than the claim: %s, want b-claimed", got)
	}
	// KEB writes i-1; a rewrite, still of an older snapshot, absorbs its
	// reservation: the kept row's counter goes down with it.
	b.writeInstance(t, "i-1", "ga-a", "b-claimed")
	if err := b.store.ReplaceCandidates(testContext(t), rows, []string{"i-1"}, before.Add(-time.Minute), ttl); err != nil {
		t.Fatal(err)
	}
	if r := b.reserved(t); r["b-claimed"] != 1 {
		t.Fatalf("reserved on the kept row after i-1's reservation was absorbed: %v, want b-claimed:1", r)
	}
	// A snapshot taken after the claim that lists the binding takes over.
	rows = append(rows, candidate("ga-a", "b-claimed", 0, 2, limit(10)))
	if err := b.store.ReplaceCandidates(testContext(t), rows, nil, b.databaseTime(t).Add(2*time.Minute), ttl); err != nil {
		t.Fatal(err)
	}
	var claims int
	if err := b.keb.QueryRowContext(testContext(t), `SELECT count(*) FROM hap.recorded_claims`).Scan(&claims); err != nil {
		t.Fatal(err)
	}
	if claims != 0 {
		t.Fatalf("%d claims still recorded after a snapshot that shows them", claims)
	}
}

// GA 1's binding x is withdrawn by KEB's free step, cleaned, and claimed by
// GA 2 before the job's next run. GA 1 must never get x again; GA 2 gets it.
func TestABindingClaimedByAnotherGAIsNeverPickedForTheFormerOne(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-1", "x", 0, 1, limit(10))}, nil)
	if got := b.mustPick(t, "i-old", "ga-1"); got != "x" {
		t.Fatalf("first pick: %s, want x", got)
	}
	if err := testbed.WithdrawBinding(testContext(t), b.keb, provisioning.Withdrawal{BindingName: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := b.recordClaim(t, "i-ga2", "ga-2", "x", limit(10)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"i-new", "i-old"} {
		if name, claimNew, err := b.pick(testContext(t), id, "ga-1"); err != nil || !claimNew {
			t.Fatalf("GA 1's pick for %s after GA 2 claimed x: %q, claimNew %v, %v; want claimNew", id, name, claimNew, err)
		}
	}
	if got := b.mustPick(t, "i-ga2-next", "ga-2"); got != "x" {
		t.Fatalf("GA 2's next pick: %s, want x", got)
	}
	if r := b.reserved(t); r["x"] != 2 {
		t.Fatalf("reserved on x: %v, want 2, GA 2's claim and pick", r)
	}
}

// KEB never claims a shared binding: a shared pool without a binding is an
// error of its own, never ClaimNew.
func TestAnEmptySharedPoolIsNoClaim(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 0, 1, limit(10))}, nil)
	pick, err := testbed.Propose(testContext(t), b.keb, provisioning.Request{InstanceID: "i-1", HyperscalerType: "aws"})
	if !errors.Is(err, provisioning.ErrSharedPoolEmpty) || pick.ClaimNew {
		t.Fatalf("shared pick in an empty pool: %+v, %v; want ErrSharedPoolEmpty", pick, err)
	}
}

// A shared pool counts the placements since the snapshot: the least used
// binding then is the one KEB's count of shoots would name.
func TestASharedPickCountsPlacementsSinceTheSnapshot(t *testing.T) {
	b := newBed(t)
	shared := func(name string, shoots int) hap.Candidate {
		return hap.Candidate{Pool: aws, BindingName: name, ShootCount: shoots, EffectiveCount: shoots, Selectable: true}
	}
	b.replace(t, []hap.Candidate{shared("s-1", 3), shared("s-2", 4)}, nil)
	b.writeInstance(t, "live-1", "ga-x", "s-1")
	b.writeInstance(t, "live-2", "ga-y", "s-1")
	if got := b.mustPick(t, "i-1", ""); got != "s-2" {
		t.Fatalf("shared pick after two live placements on s-1: %s, want s-2", got)
	}
	// KEB applies no limit in a shared pool, whatever its allowlist says.
	pick, err := testbed.Propose(testContext(t), b.keb, provisioning.Request{InstanceID: "i-2", HyperscalerType: "aws",
		Account: &provisioning.Account{MultiAccount: true, Limit: 1}})
	if err != nil || pick.Binding != "s-1" {
		t.Fatalf("shared pick with KEB's limit of 1 for dedicated pools: %+v, %v; want s-1", pick, err)
	}
}

// RecordClaim ends with the caller's context, as every call does: a
// deadline KEB's claim used up fails the record, which a second call (KEB's
// retry, or the same step's) makes, once, and the GA's next cluster lands on
// the claimed binding.
func TestRecordClaimEndsWithTheCallersContext(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-full", 3, 1, limit(3))}, nil)
	client := &provisioning.Client{DB: b.keb, Timeout: 5 * time.Second}
	defer client.Close()
	claim := provisioning.Claim{
		Request:     provisioning.Request{InstanceID: "i-1", GlobalAccountID: "ga-a", HyperscalerType: "aws"},
		BindingName: "b-claimed", Limit: limit(3),
	}
	spent, cancel := context.WithTimeout(testContext(t), time.Nanosecond)
	defer cancel()
	<-spent.Done()
	if err := client.RecordClaim(spent, claim); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RecordClaim after the caller's deadline passed: %v; want the deadline", err)
	}
	if r := b.reserved(t); r["b-claimed"] != 0 {
		t.Fatalf("a record that ended with its context wrote %v", r)
	}
	for range 2 {
		if err := client.RecordClaim(testContext(t), claim); err != nil {
			t.Fatalf("RecordClaim with a live context: %v", err)
		}
	}
	if got := b.mustPick(t, "i-2", "ga-a"); got != "b-claimed" {
		t.Fatalf("next pick: %s, want b-claimed", got)
	}
}

// The limit and the guard are KEB's when the request carries them: the
// runtime's provider decides the limit, not the binding's.
func TestKEBsAccountDecisionOverridesTheTables(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 5, 1, limit(10))}, nil)
	req := func(id string, account *provisioning.Account) provisioning.Request {
		return provisioning.Request{InstanceID: id, GlobalAccountID: "ga-a", HyperscalerType: "aws", Account: account}
	}
	pick, err := testbed.Propose(testContext(t), b.keb, req("i-1", &provisioning.Account{MultiAccount: true, Limit: 5}))
	if err != nil || !pick.ClaimNew {
		t.Fatalf("KEB's limit of 5 on a binding holding 5: %+v, %v; want ClaimNew", pick, err)
	}
	pick, err = testbed.Propose(testContext(t), b.keb, req("i-2", &provisioning.Account{}))
	if err != nil || pick.Binding != "b-1" {
		t.Fatalf("a GA KEB does not allow several bindings: %+v, %v; want b-1, no limit", pick, err)
	}

	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 0, 1, limit(10)), candidate("ga-a", "b-2", 0, 2, limit(10))}, nil)
	b.exec(t, `DELETE FROM hap.binding_reservations`)
	b.exec(t, `UPDATE hap.binding_candidates SET reserved = 0`)
	_, err = testbed.Propose(testContext(t), b.keb, req("i-3", &provisioning.Account{MultiAccount: true, Limit: 10, MinBindingsForGuard: 2}))
	if !errors.Is(err, provisioning.ErrGuarded) {
		t.Fatalf("two empty bindings under KEB's guard of 2: %v; want ErrGuarded", err)
	}
	b.writeInstance(t, "live-1", "ga-a", "b-2")
	if pick, err := testbed.Propose(testContext(t), b.keb, req("i-4", &provisioning.Account{MultiAccount: true, Limit: 10, MinBindingsForGuard: 2})); err != nil || pick.Binding != "b-2" {
		t.Fatalf("after a live placement the guard no longer holds: %+v, %v; want b-2", pick, err)
	}
}

// A retry for an instance whose reserved binding was withdrawn since gets a
// binding that is still in the pool.
func TestARetryAfterAWithdrawalPicksAnew(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 5, 1, limit(10)), candidate("ga-a", "b-2", 1, 2, limit(10))}, nil)
	if got := b.mustPick(t, "i-1", "ga-a"); got != "b-1" {
		t.Fatalf("first pick: %s, want b-1", got)
	}
	if err := testbed.WithdrawBinding(testContext(t), b.keb, provisioning.Withdrawal{BindingName: "b-1"}); err != nil {
		t.Fatal(err)
	}
	if got := b.mustPick(t, "i-1", "ga-a"); got != "b-2" {
		t.Fatalf("retry after b-1 was withdrawn: %s, want b-2", got)
	}
	if r := b.reserved(t); r["b-1"] != 0 || r["b-2"] != 1 {
		t.Fatalf("reserved: %v, want b-1:0 b-2:1", r)
	}
}

// A second withdrawal keeps the first time: a retry must not postpone the
// moment a snapshot may end it.
func TestWithdrawingAgainKeepsTheFirstTime(t *testing.T) {
	b := newBed(t)
	withdrawnAt := func() time.Time {
		var at time.Time
		if err := b.keb.QueryRowContext(testContext(t), `SELECT withdrawn_at FROM hap.withdrawn_bindings WHERE binding_name = 'b-1'`).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	for range 2 {
		if err := testbed.WithdrawBinding(testContext(t), b.keb, provisioning.Withdrawal{BindingName: "b-1"}); err != nil {
			t.Fatal(err)
		}
	}
	first := withdrawnAt()
	if err := testbed.WithdrawBinding(testContext(t), b.keb, provisioning.Withdrawal{BindingName: "b-1"}); err != nil {
		t.Fatal(err)
	}
	if again := withdrawnAt(); !again.Equal(first) {
		t.Fatalf("withdrawn_at moved from %s to %s", first, again)
	}
}

// A pick that waited for another transaction on its row counts the picks
// that transaction committed, even when the same transaction (a rewrite)
// dropped a reservation its snapshot still counted: b-1 holds 2 clusters,
// X placed (reserved and written), and Y picked while Z waited. Z must not
// be the fifth cluster on a binding with a limit of 4.
func TestAPickThatWaitedCountsWhatCommittedMeanwhile(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 2, 1, limit(4))}, nil)
	if got := b.mustPick(t, "x", "ga-a"); got != "b-1" {
		t.Fatalf("first pick: %s", got)
	}
	b.writeInstance(t, "x", "ga-a", "b-1")

	// Y's pick and a rewrite absorbing X's reservation, in one open
	// transaction holding b-1's row.
	blocker, err := b.keb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Rollback() }()
	for _, stmt := range []string{
		`UPDATE hap.binding_candidates SET reserved = reserved + 1 - 1, picks = picks + 1 WHERE binding_name = 'b-1'`,
		`INSERT INTO hap.binding_reservations (instance_id, binding_name, global_account_id, hyperscaler_type, eu_access)
			VALUES ('y', 'b-1', 'ga-a', 'aws', false)`,
		`DELETE FROM hap.binding_reservations WHERE instance_id = 'x'`,
	} {
		if _, err := blocker.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	type answer struct {
		name     string
		claimNew bool
		err      error
	}
	z := make(chan answer, 1)
	go func() {
		name, claimNew, err := b.pick(ctx, "z", "ga-a")
		z <- answer{name, claimNew, err}
	}()
	if err := testbed.WaitForRowLockWait(ctx, b.keb); err != nil {
		t.Fatal(err)
	}
	if err := blocker.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := <-z; got.err != nil || !got.claimNew {
		t.Fatalf("Z's pick once Y's committed: %q, claimNew %v, %v; want claimNew, b-1 holds 4 of 4", got.name, got.claimNew, got.err)
	}
}

// A pick whose instance was deprovisioned before KEB wrote its binding
// holds no place: KEB's count has no such cluster.
func TestAReservationOfADeletedInstanceHoldsNoPlace(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 2, 1, limit(3))}, nil)
	if got := b.mustPick(t, "i-1", "ga-a"); got != "b-1" {
		t.Fatalf("first pick: %s", got)
	}
	b.exec(t, `UPDATE instances SET deleted_at = now() WHERE instance_id = 'i-1'`)
	if got := b.mustPick(t, "i-2", "ga-a"); got != "b-1" {
		t.Fatalf("pick after i-1 was deprovisioned before its binding was written: %s, want b-1, 2 of 3", got)
	}
}
