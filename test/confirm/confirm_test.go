package confirm

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// An operator adds a binding to an exhausted shared pool after the
// snapshot, the usual answer to an empty pool: the table has none, so it
// hands the request to KEB's live path, which uses the new binding. The
// table never fails a provisioning KEB's live path would place.
func TestASharedBindingAddedSinceTheSnapshotGoesToKEBsLivePath(t *testing.T) {
	l := landscape.New(1)
	l.AddBinding(landscape.BindingSpec{Pool: awsPool, GlobalAccountID: "ga-1"})
	s := newScene(t, l)
	s.computeTable()
	s.sc.AddBinding(t, s.ctx, landscape.BindingSpec{Name: "shared-new", Pool: awsPool, Shared: true})

	id := s.requested("ga-1")
	_, err := s.client.NextBinding(s.ctx, s.request(id, "", awsPool))
	if !errors.Is(err, provisioning.ErrSharedPoolEmpty) || !provisioning.LivePath(err) {
		t.Fatalf("shared pick after a binding was added to the empty pool: %v; want ErrSharedPoolEmpty, KEB's live path", err)
	}
	live, err := s.keb.Shared(s.ctx, awsPool)
	if err != nil || live.Decision.Binding != "shared-new" {
		t.Fatalf("KEB's live path: %+v, %v; want shared-new", live.Decision, err)
	}
}

// A binding labelled dirty by an operator retiring the account (or by a
// free step whose withdrawal failed) after the snapshot: Gardener rejects
// it, the table withdraws it and proposes the GA's next binding.
func TestABindingMarkedDirtyByHandIsNeverUsed(t *testing.T) {
	l := landscape.New(2)
	l.AddBinding(landscape.BindingSpec{Name: "aws-a", Pool: awsPool, GlobalAccountID: "ga-1"})
	l.AddBinding(landscape.BindingSpec{Name: "aws-b", Pool: awsPool, GlobalAccountID: "ga-1"})
	s := newScene(t, l)
	s.placed("ga-1", "aws-a")
	s.computeTable()
	if p, err := s.client.Propose(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool)); err != nil || p.Binding != "aws-a" {
		t.Fatalf("the table's proposal before the label: %+v, %v; want aws-a, the most populated", p, err)
	}
	s.label("aws-a", "dirty", "true")

	pick, err := s.client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if err != nil || pick.Binding != "aws-b" {
		t.Fatalf("pick after aws-a was marked dirty: %+v, %v; want aws-b", pick, err)
	}
	if why := s.withdrawn("aws-a"); !strings.Contains(why, "dirty") {
		t.Fatalf("aws-a's withdrawal: %q; want Gardener's reason, dirty", why)
	}
	// The table offers it to nobody any more: the next proposal is aws-b
	// without asking Gardener twice.
	if p, err := s.client.Propose(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool)); err != nil || p.Binding != "aws-b" {
		t.Fatalf("the table's next proposal: %+v, %v; want aws-b", p, err)
	}
	// A snapshot taken after, which still shows it dirty, keeps it out.
	s.computeTable()
	if p, err := s.client.Propose(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool)); err != nil || p.Binding != "aws-b" {
		t.Fatalf("the proposal after a run that saw the label: %+v, %v; want aws-b", p, err)
	}
}

// KEB's free step marked ga-1's empty binding dirty but its withdrawal
// failed; the cleanup wiped the account and ga-2 claimed it on KEB's live
// path. Whether or not ga-2 has placed a cluster there yet, ga-1 is never
// handed ga-2's account.
func TestAFailedWithdrawalNeverHandsAGAAnotherGAsAccount(t *testing.T) {
	for _, placedByGA2 := range []bool{false, true} {
		name := map[bool]string{false: "claimed, empty", true: "claimed and used"}[placedByGA2]
		t.Run(name, func(t *testing.T) {
			l := landscape.New(3)
			l.AddBinding(landscape.BindingSpec{Name: "aws-a", Pool: awsPool, GlobalAccountID: "ga-1"})
			s := newScene(t, l)
			s.computeTable()
			// The free step's label, the cleanup, ga-2's claim.
			s.label("aws-a", "dirty", "true")
			s.label("aws-a", "dirty", "", "tenantName", "")
			s.label("aws-a", "tenantName", "ga-2")
			if placedByGA2 {
				s.placed("ga-2", "aws-a")
			}
			pick, err := s.client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
			if pick.Binding != "" {
				t.Fatalf("ga-1 was handed %s, now ga-2's account (%v)", pick.Binding, err)
			}
			// KEB claims for ga-1: on the table's word (its only binding is
			// gone from Gardener), or on its live path, which sees the same.
			if (err != nil || !pick.ClaimNew) && !errors.Is(err, provisioning.ErrClaimedSince) {
				t.Fatalf("ga-1's answer: %+v, %v; want ClaimNew or KEB's live path", pick, err)
			}
			if live, err := s.keb.Dedicated(s.ctx, "ga-1", awsPool); err != nil || !live.Decision.ClaimNew {
				t.Fatalf("KEB's live path for ga-1: %+v, %v; want ClaimNew", live.Decision, err)
			}
		})
	}
}

// ga-1's two bindings of the snapshot hold nothing, and KEB's guard is
// two; since the snapshot ga-1 claimed a third on KEB's live path and its
// cluster runs there. KEB places (its guard counts the bindings it lists
// now), so the table must not answer ErrGuarded: Gardener shows a binding
// the table has not seen, and the request goes to KEB's live path.
func TestTheGuardIsAnsweredOnlyOnTheBindingsGardenerShowsNow(t *testing.T) {
	l := landscape.New(4)
	l.AddBinding(landscape.BindingSpec{Name: "aws-a", Pool: awsPool, GlobalAccountID: "ga-1"})
	l.AddBinding(landscape.BindingSpec{Name: "aws-b", Pool: awsPool, GlobalAccountID: "ga-1"})
	l.AddBinding(landscape.BindingSpec{Name: "aws-c", Pool: awsPool})
	s := newScene(t, l)
	s.computeTable()
	if _, err := s.client.Propose(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool)); !errors.Is(err, provisioning.ErrGuarded) {
		t.Fatalf("the table's proposal at the snapshot: %v; want KEB's guard", err)
	}
	s.label("aws-c", "tenantName", "ga-1")
	s.placed("ga-1", "aws-c")

	_, err := s.client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if !errors.Is(err, provisioning.ErrClaimedSince) || !provisioning.LivePath(err) {
		t.Fatalf("pick after ga-1 claimed aws-c on the live path: %v; want ErrClaimedSince, KEB's live path", err)
	}
	if live, err := s.keb.Dedicated(s.ctx, "ga-1", awsPool); err != nil || live.Decision.Binding != "aws-c" {
		t.Fatalf("KEB's live path: %+v, %v; want aws-c", live.Decision, err)
	}
	// With Gardener showing exactly the table's bindings, the guard is
	// KEB's own verdict, and the answer stays.
	s.label("aws-c", "tenantName", "ga-2")
	s.exec(`UPDATE instances SET deleted_at = now() WHERE subscription_secret_name = 'aws-c'`)
	if _, err := s.client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool)); !errors.Is(err, provisioning.ErrGuarded) || provisioning.LivePath(err) {
		t.Fatalf("pick with Gardener showing the table's two empty bindings: %v; want ErrGuarded, KEB's verdict", err)
	}
	if live, err := s.keb.Dedicated(s.ctx, "ga-1", awsPool); err != nil || !live.Decision.Guarded {
		t.Fatalf("KEB's live path: %+v, %v; want guarded", live.Decision, err)
	}
}

// A cluster whose instance KEB created long before the snapshot and whose
// binding it wrote at any moment after counts at once: the count is KEB's
// own at the moment KEB asks, not a window of recent instances.
func TestAPlacementOfAnOldInstanceCountsWhateverItsTiming(t *testing.T) {
	l := landscape.New(5)
	l.AddBinding(landscape.BindingSpec{Name: "aws-a", Pool: awsPool, GlobalAccountID: "ga-1"})
	s := newScene(t, l)
	s.placed("ga-1", "aws-a")
	s.placed("ga-1", "aws-a")
	old := s.requested("ga-1")
	s.exec(`UPDATE instances SET created_at = now() - interval '3 days' WHERE instance_id = $1`, old)
	s.computeTable()
	s.exec(`UPDATE instances SET subscription_secret_name = 'aws-a' WHERE instance_id = $1`, old)

	pick, err := s.client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if err != nil || !pick.ClaimNew || !slices.Equal(pick.Held, []string{"aws-a"}) {
		t.Fatalf("pick with aws-a at 3 of 3 by KEB's count now: %+v, %v; want ClaimNew holding aws-a", pick, err)
	}
	if live, err := s.keb.Dedicated(s.ctx, "ga-1", awsPool); err != nil || !live.Decision.ClaimNew {
		t.Fatalf("KEB's live path: %+v, %v; want ClaimNew", live.Decision, err)
	}
}

// ga-1's two bindings are full, and one of them was retired by hand since
// the snapshot (dirty): KEB's live path lists the other alone, full, and
// claims. The table's ClaimNew stands: Gardener lists no binding the table
// does not hold, so no second opinion is needed.
func TestAClaimStandsWhenGardenerListsFewerOfTheGAsBindings(t *testing.T) {
	l := landscape.New(6)
	l.AddBinding(landscape.BindingSpec{Name: "aws-a", Pool: awsPool, GlobalAccountID: "ga-1"})
	l.AddBinding(landscape.BindingSpec{Name: "aws-b", Pool: awsPool, GlobalAccountID: "ga-1"})
	s := newScene(t, l)
	for range 3 {
		s.placed("ga-1", "aws-a")
		s.placed("ga-1", "aws-b")
	}
	s.computeTable()
	s.label("aws-b", "dirty", "true")

	pick, err := s.client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if err != nil || !pick.ClaimNew {
		t.Fatalf("pick with both bindings full and aws-b retired: %+v, %v; want ClaimNew", pick, err)
	}
	if live, err := s.keb.Dedicated(s.ctx, "ga-1", awsPool); err != nil || !live.Decision.ClaimNew {
		t.Fatalf("KEB's live path: %+v, %v; want ClaimNew", live.Decision, err)
	}
}
