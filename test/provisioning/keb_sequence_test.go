package provisioning_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// KEB's whole life of a binding, KEB's side through the module's API alone:
// resolve, provision, deprovision, free (dirty + withdraw), resolve again.
// The job's table stays as its last run wrote it, before the free step: the
// withdrawn binding must not be handed out all the same.
func TestKEBsFreeStepWithdrawsTheBindingFromEveryPick(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(10))}, nil)
	request := func(instanceID string) provisioning.Request {
		return provisioning.Request{InstanceID: instanceID, GlobalAccountID: "ga-a", HyperscalerType: "aws"}
	}

	// Resolve and provision: the GA's binding.
	pick, err := testbed.Propose(ctx, b.keb, request("i-1"))
	if err != nil || pick.Binding != "b-1" {
		t.Fatalf("first resolve: %+v, %v; want b-1", pick, err)
	}
	b.writeInstance(t, "i-1", "ga-a", "b-1")

	// Deprovision every instance on b-1; the free step marks it dirty
	// (in Gardener) and withdraws it, twice as a retry would.
	b.exec(t, `UPDATE instances SET deleted_at = now() WHERE subscription_secret_name = 'b-1'`)
	for range 2 {
		if err := testbed.WithdrawBinding(ctx, b.keb, provisioning.Withdrawal{BindingName: "b-1"}); err != nil {
			t.Fatalf("withdraw: %v", err)
		}
	}

	// Resolve again: the table still lists b-1 as selectable, the pick
	// must not return it.
	pick, err = testbed.Propose(ctx, b.keb, request("i-2"))
	if err != nil || !pick.ClaimNew {
		t.Fatalf("resolve after the free step: %+v, %v; want claim new", pick, err)
	}

	// KEB claims a fresh account and records it; the next pick lands there.
	if err := b.recordClaim(t, "i-2", "ga-a", "b-2", limit(10)); err != nil {
		t.Fatal(err)
	}
	if pick, err = testbed.Propose(ctx, b.keb, request("i-3")); err != nil || pick.Binding != "b-2" {
		t.Fatalf("resolve after the claim: %+v, %v; want b-2", pick, err)
	}

	// A run whose snapshot still shows b-1 dirty keeps the withdrawal;
	// once one taken later shows it cleaned, the rows decide again.
	now := b.databaseTime(t)
	if ended, err := b.store.EndWithdrawals(ctx, now, []string{"b-1"}); err != nil || ended != 0 {
		t.Fatalf("EndWithdrawals with b-1 still dirty: %d, %v; want none ended", ended, err)
	}
	if pick, err = testbed.Propose(ctx, b.keb, request("i-4")); err != nil || pick.Binding != "b-2" {
		t.Fatalf("resolve while b-1 is dirty: %+v, %v; want b-2", pick, err)
	}
	if ended, err := b.store.EndWithdrawals(ctx, now, nil); err != nil || ended != 1 {
		t.Fatalf("EndWithdrawals with b-1 cleaned: %d, %v; want 1 ended", ended, err)
	}
}

// A binding the cleanup wiped and KEB claimed anew is pickable at once,
// whatever withdrawal it carried from its previous tenant.
func TestAClaimEndsTheBindingsWithdrawal(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(10))}, nil)
	if err := testbed.WithdrawBinding(ctx, b.keb, provisioning.Withdrawal{BindingName: "b-9"}); err != nil {
		t.Fatal(err)
	}
	if err := b.recordClaim(t, "i-1", "ga-new", "b-9", limit(10)); err != nil {
		t.Fatal(err)
	}
	if got := b.mustPick(t, "i-2", "ga-new"); got != "b-9" {
		t.Fatalf("pick after the claim: %s, want b-9", got)
	}
}

// Only a snapshot taken after a withdrawal can say it is over.
func TestAWithdrawalOutlivesSnapshotsTakenBeforeIt(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	before := b.databaseTime(t)
	if err := testbed.WithdrawBinding(ctx, b.keb, provisioning.Withdrawal{BindingName: "b-1"}); err != nil {
		t.Fatal(err)
	}
	if ended, err := b.store.EndWithdrawals(ctx, before, nil); err != nil || ended != 0 {
		t.Fatalf("EndWithdrawals for a snapshot older than the withdrawal: %d, %v; want none ended", ended, err)
	}
	if ended, err := b.store.EndWithdrawals(ctx, b.databaseTime(t), nil); err != nil || ended != 1 {
		t.Fatalf("EndWithdrawals for a later snapshot: %d, %v; want 1", ended, err)
	}
	if err := testbed.WithdrawBinding(ctx, b.keb, provisioning.Withdrawal{}); err == nil {
		t.Fatal("a withdrawal without a binding name was accepted")
	}
}

// The table answers only while it is younger than the age KEB accepts;
// older, or never computed, NextBinding refuses with ErrStale and reserves
// nothing, so KEB takes its binding the way it does without the table.
func TestAStaleTableIsRefused(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	request := provisioning.Request{InstanceID: "i-1", GlobalAccountID: "ga-a", HyperscalerType: "aws"}
	anHour := &provisioning.Client{DB: b.keb, MaxAge: time.Hour}
	defer anHour.Close()
	if _, err := anHour.Propose(ctx, request); !errors.Is(err, provisioning.ErrStale) {
		t.Fatalf("pick before the job ever computed the table: %v; want ErrStale", err)
	}

	rows := []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(10))}
	if err := b.store.ReplaceCandidates(ctx, rows, nil, b.databaseTime(t).Add(-2*time.Hour), ttl); err != nil {
		t.Fatal(err)
	}
	pick, err := anHour.Propose(ctx, request)
	if !errors.Is(err, provisioning.ErrStale) || pick.TableAge < 2*time.Hour {
		t.Fatalf("pick from a table 2h old with MaxAge 1h: %+v, %v; want ErrStale and the age", pick, err)
	}
	if r := b.reserved(t); r["b-1"] != 0 {
		t.Fatalf("a refused pick reserved %d on b-1", r["b-1"])
	}
	if _, err := testbed.Propose(ctx, b.keb, provisioning.Request{InstanceID: "i-1", GlobalAccountID: "ga-a",
		HyperscalerType: "aws"}); !errors.Is(err, provisioning.ErrStale) {
		t.Fatalf("pick from a table 2h old with the default MaxAge (%s): %v; want ErrStale", provisioning.DefaultMaxAge, err)
	}

	threeHours := &provisioning.Client{DB: b.keb, MaxAge: 3 * time.Hour}
	defer threeHours.Close()
	pick, err = threeHours.Propose(ctx, request)
	if err != nil || pick.Binding != "b-1" || pick.TableAge < 2*time.Hour || pick.TableAge > 3*time.Hour {
		t.Fatalf("pick from a table 2h old with MaxAge 3h: %+v, %v; want b-1 and its age", pick, err)
	}
}

func (b *bed) databaseTime(t *testing.T) time.Time {
	t.Helper()
	now, err := b.store.DatabaseTime(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	return now
}
