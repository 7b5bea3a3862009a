package provisioning_test

import (
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// A rewrite holds no lock on the table, only on the rows it changes: while
// one is open, a pick of a row it leaves alone goes through, and a pick of
// a row it changes lands on the new row once the rewrite commits, with both
// changes counted.
func TestAPickDoesNotWaitForARewriteOfOtherRows(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	rows := []hap.Candidate{
		candidate("ga-a", "a-1", 0, 1, limit(10)),
		candidate("ga-b", "b-1", 0, 1, limit(10)),
	}
	b.replace(t, rows, nil)

	// Hold the rewrite at its last statement, its row changes made and not
	// yet committed. SHARE mode stops the rewrite's write of the table's
	// time and lets reads through, as every pick reads that time.
	blocker, err := b.keb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Rollback() }()
	if _, err := blocker.ExecContext(ctx, "LOCK TABLE hap.candidates_computed IN SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	changed := []hap.Candidate{candidate("ga-a", "a-1", 5, 1, limit(10)), rows[1]}
	rewrite := make(chan error, 1)
	go func() { rewrite <- b.store.ReplaceCandidates(ctx, changed, nil, time.Now(), ttl) }()
	if err := testbed.WaitForLockWait(ctx, b.keb, "candidates_computed"); err != nil {
		t.Fatal(err)
	}

	// A pick of the untouched row, with a bound on how long it may wait for
	// a lock: under a table lock it would run into it.
	conn, err := b.keb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET lock_timeout = '5s'"); err != nil {
		t.Fatal(err)
	}
	got, err := testbed.Propose(ctx, conn, provisioning.Request{InstanceID: "i-b", GlobalAccountID: "ga-b", HyperscalerType: "aws"})
	if err != nil || got.ClaimNew || got.Binding != "b-1" {
		t.Fatalf("a pick of a row the open rewrite does not change: %+v, %v", got, err)
	}

	// A pick of the changed row waits for the rewrite and then counts on
	// the new row.
	picked := make(chan string, 1)
	go func() {
		name, _, err := b.pick(ctx, "i-a", "ga-a")
		if err != nil {
			t.Error(err)
		}
		picked <- name
	}()
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-rewrite; err != nil {
		t.Fatal(err)
	}
	if name := <-picked; name != "a-1" {
		t.Fatalf("the pick of the changed row got %q", name)
	}
	stored, err := b.store.Candidates(ctx, "ga-a")
	if err != nil || len(stored) != 1 || stored[0].EffectiveCount != 5 || stored[0].Reserved != 1 {
		t.Fatalf("a-1 after both: %+v, %v; want effective 5 and 1 reserved", stored, err)
	}
	if r := b.reserved(t); r["b-1"] != 1 {
		t.Fatalf("b-1's reservation made during the rewrite: %v", r)
	}
}
