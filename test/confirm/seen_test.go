package confirm

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// A table that had seen Gardener within the client's bound answers as it
// stands, with no call to Gardener: the binding, ClaimNew and the guard
// alike. One that had seen it longer ago, or never (a CronJob's table), has
// Gardener confirm, and Gardener then rejects a binding labelled dirty since.
func TestATableThatHasSeenGardenerRecentlyIsTrustedAndAnOlderOneConfirmed(t *testing.T) {
	l := landscape.New(12)
	l.AddBinding(landscape.BindingSpec{Name: "aws-a", Pool: awsPool, GlobalAccountID: "ga-1"})
	l.AddBinding(landscape.BindingSpec{Name: "aws-b", Pool: awsPool, GlobalAccountID: "ga-1"})
	l.AddBinding(landscape.BindingSpec{Name: "aws-full", Pool: awsPool, GlobalAccountID: "ga-2"})
	l.AddBinding(landscape.BindingSpec{Pool: awsPool})
	s := newScene(t, l)
	s.placed("ga-1", "aws-a")
	for range kebLimit {
		s.placed("ga-2", "aws-full")
	}
	s.computeTable()
	asked := &countingGardener{Gardener: s.keb.Gardener()}
	client := &provisioning.Client{DB: s.db, Gardener: asked, Timeout: 30 * time.Second, SeenWithin: 10 * time.Second}
	t.Cleanup(func() { _ = client.Close() })

	s.seenGardener("now()")
	pick, err := client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if err != nil || pick.Binding != "aws-a" || pick.Confirmed || asked.calls.Load() != 0 {
		t.Fatalf("a pick from a table that saw Gardener just now: %+v, %v, %d calls to Gardener; want aws-a, unconfirmed, none", pick, err, asked.calls.Load())
	}
	claim := s.request(s.requested("ga-2"), "ga-2", awsPool)
	pick, err = client.NextBinding(s.ctx, claim)
	if err != nil || !pick.ClaimNew || pick.Confirmed || asked.calls.Load() != 0 {
		t.Fatalf("ClaimNew from a table that saw Gardener just now: %+v, %v, %d calls to Gardener; want ClaimNew, unconfirmed, none", pick, err, asked.calls.Load())
	}
	if err := client.AbandonClaim(s.ctx, claim); err != nil {
		t.Fatal(err)
	}

	// Since then aws-a was marked dirty; the table has not seen it.
	s.label("aws-a", "dirty", "true")
	s.seenGardener("now() - interval '11 seconds'")
	pick, err = client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if err != nil || pick.Binding != "aws-b" || !pick.Confirmed || s.withdrawn("aws-a") == "" {
		t.Fatalf("a pick from a table that saw Gardener 11 s ago, bound 10 s: %+v, %v, aws-a withdrawn: %q; want aws-b confirmed by Gardener, which rejected the dirty aws-a", pick, err, s.withdrawn("aws-a"))
	}
	s.seenGardener("NULL")
	before := asked.calls.Load()
	pick, err = client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if err != nil || pick.Binding != "aws-b" || !pick.Confirmed || asked.calls.Load() == before {
		t.Fatalf("a pick from a table that never saw Gardener (a CronJob's): %+v, %v; want aws-b confirmed by Gardener", pick, err)
	}
}

// seenGardener sets how far the candidate table has seen Gardener, as
// serve's watch does once it has proved it, to the SQL expression at.
func (s *scene) seenGardener(at string) {
	s.t.Helper()
	if _, err := s.db.ExecContext(s.ctx, `UPDATE hap.candidates_computed SET gardener_seen_at = `+at); err != nil {
		s.t.Fatal(err)
	}
}

// countingGardener counts the calls the read path makes to Gardener.
type countingGardener struct {
	provisioning.Gardener
	calls atomic.Int64
}

func (g *countingGardener) CredentialsBinding(ctx context.Context, name string) (provisioning.Binding, bool, error) {
	g.calls.Add(1)
	return g.Gardener.CredentialsBinding(ctx, name)
}

func (g *countingGardener) CredentialsBindings(ctx context.Context, selector string) ([]provisioning.Binding, error) {
	g.calls.Add(1)
	return g.Gardener.CredentialsBindings(ctx, selector)
}

// The adoption guide's first tier gives the client no Gardener: a table
// that had seen Gardener moments ago answers, any other answer is
// ErrUnconfirmed and KEB takes its live path.
func TestAClientWithoutGardenerAnswersOnlyFromATableThatHasSeenGardenerRecently(t *testing.T) {
	l := landscape.New(14)
	l.AddBinding(landscape.BindingSpec{Name: "aws-a", Pool: awsPool, GlobalAccountID: "ga-1"})
	s := newScene(t, l)
	s.computeTable()
	tier1 := &provisioning.Client{DB: s.db, Timeout: 30 * time.Second}
	t.Cleanup(func() { _ = tier1.Close() })

	s.seenGardener("now() - interval '1 minute'")
	sentLive := s.requested("ga-1")
	pick, err := tier1.NextBinding(s.ctx, s.request(sentLive, "ga-1", awsPool))
	if !errors.Is(err, provisioning.ErrUnconfirmed) || !provisioning.LivePath(err) || pick.Binding != "" {
		t.Fatalf("a pick without Gardener from a table that saw Gardener a minute ago: %+v, %v; want ErrUnconfirmed, KEB's live path", pick, err)
	}
	var reserved int
	if err := s.db.QueryRowContext(s.ctx, `SELECT count(*) FROM hap.binding_reservations WHERE instance_id = $1`, sentLive).Scan(&reserved); err != nil || reserved != 0 {
		t.Fatalf("the instance KEB resolves live holds %d reservation(s) (%v); want none, the table's answer was not used", reserved, err)
	}
	s.seenGardener("now()")
	pick, err = tier1.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if err != nil || pick.Binding != "aws-a" || pick.Confirmed {
		t.Fatalf("a pick without Gardener from a table that saw Gardener just now: %+v, %v; want aws-a from the table", pick, err)
	}
}

// A withdrawn row of the GA's is out of the table's group while Gardener
// may show it clean and the GA's again (cleaned and claimed on KEB's live
// path since): a ClaimNew over such a group is confirmed by Gardener's
// list however recently the table saw Gardener, and the binding Gardener
// lists sends KEB to its live path instead of claiming a second account.
func TestAClaimNewOverAGroupWithAWithdrawnRowIsConfirmedEvenFromAFreshTable(t *testing.T) {
	l := landscape.New(15)
	l.AddBinding(landscape.BindingSpec{Name: "aws-full", Pool: awsPool, GlobalAccountID: "ga-1"})
	l.AddBinding(landscape.BindingSpec{Name: "aws-back", Pool: awsPool, GlobalAccountID: "ga-1"})
	s := newScene(t, l)
	for range kebLimit {
		s.placed("ga-1", "aws-full")
	}
	s.computeTable()
	if err := s.client.WithdrawBinding(s.ctx, provisioning.Withdrawal{BindingName: "aws-back"}); err != nil {
		t.Fatal(err)
	}
	s.seenGardener("now()")
	_, err := s.client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if !errors.Is(err, provisioning.ErrClaimedSince) {
		t.Fatalf("ClaimNew from a fresh table whose group lacks the withdrawn aws-back, which Gardener shows as ga-1's: %v; want ErrClaimedSince, KEB's live path", err)
	}
}

// A row RecordClaim wrote is not the snapshot's: until a snapshot decides
// it, the table's seeing Gardener does not vouch for it. Here ga-1 claimed
// aws-claimed and recorded it; the free step then marked it dirty and its
// withdrawal was lost. A pick from a table that saw Gardener just now has
// Gardener confirm the recorded binding (rejected: dirty) and the ClaimNew
// that follows in a pool with a recorded claim.
func TestARecordedClaimIsConfirmedEvenFromAFreshTable(t *testing.T) {
	s := fullWithAFreeBinding(t, 16, "aws-claimed")
	s.recordedClaim("aws-claimed", "ga-1")
	s.label("aws-claimed", "dirty", "true")
	s.seenGardener("now()")

	pick, err := s.client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if err != nil || !pick.ClaimNew || !pick.Confirmed || s.withdrawn("aws-claimed") == "" {
		t.Fatalf("a pick from a fresh table whose recorded aws-claimed is dirty since: %+v, %v, withdrawn %q; want ClaimNew confirmed by Gardener, aws-claimed rejected and withdrawn",
			pick, err, s.withdrawn("aws-claimed"))
	}
}

// Another GA's recorded claim may hide a binding that is this GA's now
// (cleaned and claimed on KEB's live path since): a ClaimNew in a pool with
// a recorded claim is confirmed by Gardener's list however recently the
// table saw Gardener, and the binding Gardener lists sends KEB to its live
// path instead of claiming a second account.
func TestAClaimNewInAPoolWithARecordedClaimIsConfirmedEvenFromAFreshTable(t *testing.T) {
	s := fullWithAFreeBinding(t, 17, "aws-moved")
	s.recordedClaim("aws-moved", "ga-2")
	s.label("aws-moved", "tenantName", "ga-1")
	s.seenGardener("now()")

	_, err := s.client.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	if !errors.Is(err, provisioning.ErrClaimedSince) {
		t.Fatalf("ClaimNew from a fresh table where ga-2's recorded aws-moved is ga-1's in Gardener: %v; want ErrClaimedSince, KEB's live path", err)
	}
}

// fullWithAFreeBinding is a scene where ga-1's one binding, aws-full, is at
// KEB's limit and free is unclaimed, with the table computed.
func fullWithAFreeBinding(t *testing.T, seed uint64, free string) *scene {
	l := landscape.New(seed)
	l.AddBinding(landscape.BindingSpec{Name: "aws-full", Pool: awsPool, GlobalAccountID: "ga-1"})
	l.AddBinding(landscape.BindingSpec{Name: free, Pool: awsPool})
	s := newScene(t, l)
	for range kebLimit {
		s.placed("ga-1", "aws-full")
	}
	s.computeTable()
	return s
}

// recordedClaim is KEB's claim of binding for ga after ClaimNew: the
// tenantName label in Gardener, then RecordClaim.
func (s *scene) recordedClaim(binding, ga string) {
	s.t.Helper()
	s.label(binding, "tenantName", ga)
	limit := kebLimit
	if err := s.client.RecordClaim(s.ctx, provisioning.Claim{Request: s.request(s.requested(ga), ga, awsPool),
		BindingName: binding, Limit: &limit}); err != nil {
		s.t.Fatal(err)
	}
}
