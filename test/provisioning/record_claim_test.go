package provisioning_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func (b *bed) recordClaim(t *testing.T, instanceID, ga, binding string, clusterLimit *int) error {
	t.Helper()
	if err := b.requested(testContext(t), instanceID, ga); err != nil {
		t.Fatal(err)
	}
	return testbed.RecordClaim(testContext(t), b.keb, provisioning.Claim{
		Request:     provisioning.Request{InstanceID: instanceID, GlobalAccountID: ga, HyperscalerType: "aws"},
		BindingName: binding, Limit: clusterLimit,
	})
}

// A GA's first cluster makes KEB claim a binding; its second must land on
// that binding, not claim another account, although no run has listed the
// binding yet.
func TestAClaimedBindingTakesTheGAsNextPicksUpToItsLimit(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-other", "b-other", 1, 1, limit(3))}, nil)

	if _, claimNew, err := b.pick(testContext(t), "i-1", "ga-new"); err != nil || !claimNew {
		t.Fatalf("first pick of a GA without bindings: claimNew %v, %v; want claimNew", claimNew, err)
	}
	if err := b.recordClaim(t, "i-1", "ga-new", "b-claimed", limit(3)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"i-2", "i-3"} {
		if got := b.mustPick(t, id, "ga-new"); got != "b-claimed" {
			t.Fatalf("pick %s after the claim: %s, want b-claimed", id, got)
		}
	}
	if _, claimNew, err := b.pick(testContext(t), "i-4", "ga-new"); err != nil || !claimNew {
		t.Fatalf("pick past the claimed binding's limit of 3: claimNew %v, %v; want claimNew", claimNew, err)
	}
	if r := b.reserved(t); r["b-claimed"] != 3 || r["b-other"] != 0 {
		t.Fatalf("reserved: %v, want b-claimed:3 b-other:0", r)
	}
}

// The claimed binding ranks after the GA's full ones, and a GA without a
// limit keeps using it.
func TestAClaimedBindingRanksAfterTheGAsFullBindings(t *testing.T) {
	b := newBed(t)
	full := candidate("ga-a", "b-full", 3, 1, limit(3))
	b.replace(t, []hap.Candidate{full}, nil)
	if err := b.recordClaim(t, "i-1", "ga-a", "b-new", limit(3)); err != nil {
		t.Fatal(err)
	}
	rows, err := b.store.Candidates(testContext(t), "ga-a")
	if err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1]
	got := fmt.Sprintf("%d %s %d %d", len(rows), last.BindingName, last.Rank, last.Reserved)
	if want := "2 b-new 2 1"; got != want {
		t.Fatalf("rows, last binding, its rank and reservations: %s, want %s", got, want)
	}

	if err := b.recordClaim(t, "i-9", "ga-free", "b-unlimited", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if got := b.mustPick(t, fmt.Sprintf("i-free-%d", i), "ga-free"); got != "b-unlimited" {
			t.Fatalf("pick %d of a GA without a limit: %s, want b-unlimited", i, got)
		}
	}
}

// KEB retries a claim it is unsure about; the binding is counted once.
// An instance placed elsewhere already is refused, naming both bindings.
func TestRecordClaimIsIdempotentAndRefusesASecondBindingForAnInstance(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(5))}, nil)

	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.recordClaim(t, "i-claim", "ga-b", "b-claimed", limit(5))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d of the same claim: %v", i, err)
		}
	}
	if r := b.reserved(t); r["b-claimed"] != 1 {
		t.Fatalf("reserved after 8 calls for one instance: %v, want b-claimed:1", r)
	}

	picked := b.mustPick(t, "i-picked", "ga-a")
	err := b.recordClaim(t, "i-picked", "ga-a", "b-other", limit(5))
	if err == nil || !strings.Contains(err.Error(), `"b-other"`) || !strings.Contains(err.Error(), `"`+picked+`"`) {
		t.Fatalf("claim for an instance that holds %s: %v, want an error naming both bindings", picked, err)
	}
	if r := b.reserved(t); r["b-other"] != 0 || r[picked] != 1 {
		t.Fatalf("reserved after the refused claim: %v", r)
	}
}

// The job's next rewrite lists the binding from Gardener's labels and keeps
// the claim's reservation on it until KEB's table counts the instance.
func TestARewriteKeepsTheClaimsReservation(t *testing.T) {
	b := newBed(t)
	if err := b.recordClaim(t, "i-1", "ga-new", "b-claimed", limit(2)); err != nil {
		t.Fatal(err)
	}
	b.replace(t, []hap.Candidate{candidate("ga-new", "b-claimed", 0, 1, limit(2))}, nil)
	if r := b.reserved(t); r["b-claimed"] != 1 {
		t.Fatalf("reserved after the rewrite: %v, want b-claimed:1", r)
	}
	b.writeInstance(t, "i-1", "ga-new", "b-claimed")
	b.replace(t, []hap.Candidate{candidate("ga-new", "b-claimed", 1, 1, limit(2))}, []string{"i-1"})
	if r := b.reserved(t); r["b-claimed"] != 0 {
		t.Fatalf("reserved once the instance is counted: %v, want b-claimed:0", r)
	}
}

func TestRecordClaimRefusesIncompleteClaims(t *testing.T) {
	b := newBed(t)
	zero := 0
	req := func(instanceID, hyperscaler string) provisioning.Request {
		return provisioning.Request{InstanceID: instanceID, GlobalAccountID: "ga", HyperscalerType: hyperscaler}
	}
	for name, c := range map[string]provisioning.Claim{
		"no instance":    {Request: req("", "aws"), BindingName: "b"},
		"no binding":     {Request: req("i", "aws")},
		"no hyperscaler": {Request: req("i", ""), BindingName: "b"},
		"zero limit":     {Request: req("i", "aws"), BindingName: "b", Limit: &zero},
	} {
		if err := testbed.RecordClaim(testContext(t), b.keb, c); err == nil {
			t.Errorf("%s: recorded", name)
		}
	}
	badSchema := &provisioning.Client{DB: b.keb, Schema: "hap; DROP"}
	defer badSchema.Close()
	if err := badSchema.RecordClaim(testContext(t), provisioning.Claim{Request: req("i", "aws"), BindingName: "b"}); err == nil {
		t.Error("bad schema: recorded")
	}
	if r := b.reserved(t); len(r) != 0 {
		t.Fatalf("refused claims left rows: %v", r)
	}
}

// A claim no retry can mend is refused as such (ErrClaimRefused), and
// Client.RecordClaim is one statement bounded by the client's Timeout,
// whatever the caller's context: here a transaction holds the claimed
// binding's row and the caller's context has no deadline at all. Nothing
// retries inside it.
func TestRecordClaimIsRefusedByTypeAndBoundedByItsTimeout(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(5))}, nil)
	client := &provisioning.Client{DB: b.keb, Timeout: 200 * time.Millisecond}
	defer client.Close()

	picked := b.mustPick(t, "i-picked", "ga-a")
	err := client.RecordClaim(ctx, provisioning.Claim{Request: provisioning.Request{InstanceID: "i-picked", GlobalAccountID: "ga-a", HyperscalerType: "aws"},
		BindingName: "b-other", Limit: limit(5)})
	if !errors.Is(err, provisioning.ErrClaimRefused) || !strings.Contains(err.Error(), picked) {
		t.Fatalf("claim for an instance that holds %s: %v; want ErrClaimRefused", picked, err)
	}

	blocker, err := b.keb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Rollback() }()
	if _, err := blocker.ExecContext(ctx, `INSERT INTO hap.recorded_claims (binding_name, global_account_id, hyperscaler_type, eu_access, claimed_at)
		VALUES ('b-locked', 'ga-a', 'aws', false, now())`); err != nil {
		t.Fatal(err)
	}
	if err := b.requested(ctx, "i-claim", "ga-a"); err != nil {
		t.Fatal(err)
	}
	claim := provisioning.Claim{Request: provisioning.Request{InstanceID: "i-claim", GlobalAccountID: "ga-a", HyperscalerType: "aws"},
		BindingName: "b-locked", Limit: limit(5)}
	err = client.RecordClaim(context.Background(), claim)
	if err == nil || errors.Is(err, provisioning.ErrClaimRefused) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("claim while its row is held: %v; want a retryable error once the 200ms timeout is spent", err)
	}
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := client.RecordClaim(ctx, claim); err != nil {
		t.Fatalf("the same claim once the row is free: %v", err)
	}
}

// KEB's workers asking at once for a GA: two claims recorded, their
// clusters reserved but not yet written into KEB's instances. The GA holds
// two bindings (KEB's guard is two) and no active instance on either, yet
// it is not idle: the guard must not stop its next request, which claims.
func TestTheGuardDoesNotStopAGAWhoseClustersAreInFlight(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-other", "b-other", 1, 1, limit(1))}, nil)
	for i, binding := range []string{"b-1", "b-2"} {
		if err := b.recordClaim(t, fmt.Sprintf("i-%d", i), "ga-a", binding, limit(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.requested(testContext(t), "i-next", "ga-a"); err != nil {
		t.Fatal(err)
	}
	pick, err := testbed.Propose(testContext(t), b.keb, provisioning.Request{InstanceID: "i-next", GlobalAccountID: "ga-a",
		HyperscalerType: "aws", Account: &provisioning.Account{MultiAccount: true, Limit: 1, MinBindingsForGuard: 2}})
	if err != nil || !pick.ClaimNew {
		t.Fatalf("pick with two claimed bindings whose clusters are in flight: %+v, %v; want ClaimNew, not KEB's guard", pick, err)
	}
}
