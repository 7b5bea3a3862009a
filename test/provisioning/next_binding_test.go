package provisioning_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestConcurrentPicksNeverExceedTheLimit(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{
		candidate("ga-a", "b-1", 7, 1, limit(10)),
		candidate("ga-a", "b-2", 5, 2, limit(10)),
	}, nil)

	const picks = 50
	results := make([]string, picks)
	var wg sync.WaitGroup
	errs := make(chan error, picks)
	for i := range picks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name, claimNew, err := b.pick(testContext(t), fmt.Sprintf("i-%d", i), "ga-a")
			switch {
			case err != nil:
				errs <- err
			case claimNew:
				results[i] = "claim new"
			default:
				results[i] = name
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("pick: %v", err)
	}
	got := map[string]int{}
	for _, r := range results {
		got[r]++
	}
	want := map[string]int{"b-1": 3, "b-2": 5, "claim new": 42}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("outcomes of %d concurrent picks: %v, want %v", picks, got, want)
	}
	if r := b.reserved(t); r["b-1"] != 3 || r["b-2"] != 5 {
		t.Fatalf("reserved: %v, want b-1:3 b-2:5", r)
	}
}

func TestPickFillsTheMostPopulatedBindingFirst(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{
		candidate("ga-a", "b-1", 9, 1, limit(10)),
		candidate("ga-a", "b-2", 5, 2, limit(10)),
	}, nil)
	for i, want := range []string{"b-1", "b-2", "b-2"} {
		if got := b.mustPick(t, fmt.Sprintf("i-%d", i), "ga-a"); got != want {
			t.Fatalf("pick %d: %s, want %s", i, got, want)
		}
	}
}

func TestRetryForTheSameInstanceGetsTheSameBinding(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{
		candidate("ga-a", "b-1", 9, 1, limit(10)),
		candidate("ga-a", "b-2", 5, 2, limit(10)),
	}, nil)
	first := b.mustPick(t, "i-1", "ga-a")
	if again := b.mustPick(t, "i-1", "ga-a"); again != first {
		t.Fatalf("retry got %s, first pick %s", again, first)
	}

	// Retries racing each other: one reservation, every caller told the same.
	const callers = 20
	names := make([]string, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			names[i] = b.mustPick(t, "i-2", "ga-a")
		}()
	}
	wg.Wait()
	for _, n := range names {
		if n != names[0] {
			t.Fatalf("concurrent calls for one instance got %v", names)
		}
	}
	if r := b.reserved(t); r["b-1"]+r["b-2"] != 2 {
		t.Fatalf("reserved after retries: %v, want 2 in all (one per instance)", r)
	}
}

func TestSharedPoolPicksTheLeastUsed(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{
		candidate("", "s-1", 5, 1, nil),
		candidate("", "s-2", 3, 2, nil),
		candidate("", "s-3", 4, 3, nil),
		// A GA's own binding of the same pool is not the shared pool's.
		candidate("ga-a", "a-1", 0, 1, limit(10)),
	}, nil)
	for i, want := range []string{"s-2", "s-2", "s-3", "s-1", "s-2"} {
		if got := b.mustPick(t, fmt.Sprintf("i-%d", i), ""); got != want {
			t.Fatalf("pick %d: %s, want %s", i, got, want)
		}
	}
}

func TestWithoutLimitTheGAGetsRankOne(t *testing.T) {
	b := newBed(t)
	// Not in the allowlist: no limit, however full the binding is.
	b.replace(t, []hap.Candidate{
		candidate("ga-a", "b-1", 500, 1, nil),
		candidate("ga-a", "b-2", 3, 2, nil),
	}, nil)
	for i := range 3 {
		if got := b.mustPick(t, fmt.Sprintf("i-%d", i), "ga-a"); got != "b-1" {
			t.Fatalf("pick %d: %s, want b-1", i, got)
		}
	}
}

func TestPickStaysInItsPool(t *testing.T) {
	b := newBed(t)
	eu := candidate("ga-a", "b-eu", 1, 1, limit(10))
	eu.Pool.EUAccess = true
	gcp := candidate("ga-a", "b-gcp", 1, 1, limit(10))
	gcp.Pool.HyperscalerType = "gcp"
	unselectable := candidate("ga-a", "b-released", 10, 1, limit(10))
	unselectable.Selectable = false
	other := candidate("ga-b", "b-other", 1, 1, limit(10))
	b.replace(t, []hap.Candidate{eu, gcp, unselectable, other}, nil)

	name, claimNew, err := b.pick(testContext(t), "i-1", "ga-a")
	if err != nil || !claimNew || name != "" {
		t.Fatalf("pick for ga-a in aws/non-EU: %q, claimNew %v, %v; want claimNew", name, claimNew, err)
	}
	pick, err := testbed.Propose(testContext(t), b.keb, provisioning.Request{
		InstanceID: "i-2", GlobalAccountID: "ga-a", HyperscalerType: "aws", EUAccess: true,
	})
	if err != nil || pick.ClaimNew || pick.Binding != "b-eu" {
		t.Fatalf("pick for ga-a in aws/EU: %+v, %v; want b-eu", pick, err)
	}
}

func TestNextBindingRefusesBadRequests(t *testing.T) {
	b := newBed(t)
	cases := []struct {
		schema  string
		req     provisioning.Request
		mention string
	}{
		{"", provisioning.Request{HyperscalerType: "aws"}, "instance id is empty"},
		{"", provisioning.Request{InstanceID: "i-1"}, "hyperscaler type is empty"},
		{"hap;", provisioning.Request{InstanceID: "i-1", HyperscalerType: "aws"}, `schema "hap;"`},
	}
	for _, c := range cases {
		client := &provisioning.Client{DB: b.keb, Schema: c.schema}
		_, err := client.Propose(testContext(t), c.req)
		client.Close()
		if err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("NextBinding(%+v): %v; want an error mentioning %q", c.req, err, c.mention)
		}
	}
}

// KEB's role needs only this on the job's schema.
func TestKEBPicksWithLeastPrivilege(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(10)), candidate("ga-c", "b-9", 10, 1, limit(10))}, nil)
	role := b.dbname + "_keb"
	if err := pg.CreateRole(testContext(t), role, "keb-pw"); err != nil {
		t.Fatal(err)
	}
	b.exec(t, fmt.Sprintf(`GRANT USAGE ON SCHEMA hap TO %[1]s;
		GRANT SELECT, INSERT, UPDATE ON hap.binding_candidates TO %[1]s;
		GRANT SELECT, INSERT, DELETE ON hap.binding_reservations TO %[1]s;
		GRANT SELECT ON hap.candidates_computed TO %[1]s;
		GRANT SELECT ON hap.hap_reconciler_migrations TO %[1]s;
		GRANT SELECT, INSERT, UPDATE ON hap.recorded_claims TO %[1]s;
		GRANT SELECT, INSERT, UPDATE, DELETE ON hap.withdrawn_bindings TO %[1]s;
		GRANT SELECT, INSERT, UPDATE, DELETE ON hap.claim_leases TO %[1]s;
		GRANT SELECT ON instances TO %[1]s`, role))
	keb := openKEB(t, pg.RoleURL(role, "keb-pw", b.dbname))
	pick, err := testbed.Propose(testContext(t), keb, provisioning.Request{
		InstanceID: "i-1", GlobalAccountID: "ga-a", HyperscalerType: "aws",
	})
	if err != nil || pick.ClaimNew || pick.Binding != "b-1" {
		t.Fatalf("pick as %s: %+v, %v", role, pick, err)
	}
	if err := testbed.WithdrawBinding(testContext(t), keb, provisioning.Withdrawal{BindingName: "b-1"}); err != nil {
		t.Fatalf("withdraw as %s: %v", role, err)
	}
	if err := testbed.RecordClaim(testContext(t), keb, provisioning.Claim{Request: provisioning.Request{
		InstanceID: "i-2", GlobalAccountID: "ga-a", HyperscalerType: "aws"}, BindingName: "b-2", Limit: limit(10)}); err != nil {
		t.Fatalf("record a claim as %s: %v", role, err)
	}
	// ga-c's one binding is full: the pick takes the claim's lease, a retry
	// of the step renews it, and KEB abandons it when it cannot claim.
	client := &provisioning.Client{DB: keb, Gardener: listsOnly{"b-9"}, HoldClaims: true}
	claim := provisioning.Request{InstanceID: "i-3", GlobalAccountID: "ga-c", HyperscalerType: "aws"}
	for range 2 {
		if pick, err := client.NextBinding(testContext(t), claim); err != nil || !pick.ClaimNew {
			t.Fatalf("claim as %s: %+v, %v", role, pick, err)
		}
	}
	if err := client.AbandonClaim(testContext(t), claim); err != nil {
		t.Fatalf("abandon the claim as %s: %v", role, err)
	}
}

// listsOnly is Gardener holding exactly the named bindings of every GA and
// pool asked about, each fit: what the database's grants are tested with.
type listsOnly []string

func (l listsOnly) CredentialsBinding(_ context.Context, name string) (provisioning.Binding, bool, error) {
	return provisioning.Binding{}, false, fmt.Errorf("binding %s: not expected to be proposed", name)
}

func (l listsOnly) CredentialsBindings(context.Context, string) ([]provisioning.Binding, error) {
	var out []provisioning.Binding
	for _, name := range l {
		out = append(out, provisioning.Binding{Name: name})
	}
	return out, nil
}
