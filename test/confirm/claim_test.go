package confirm

import (
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// Many of KEB's workers, on two replicas, ask at once for one GA whose only
// binding is at its limit (a pipeline creating clusters in parallel). On
// the table's path exactly one account is claimed per limit reached, every
// worker is placed and none over-fills an account. KEB's live path, run on
// the same landscape for another GA in the same way, is printed beside it:
// it decides outside its step's mutex, so every worker that found the GA
// full claims.
func TestOneClaimPerLimitReachedHoweverManyWorkersAsk(t *testing.T) {
	for _, workers := range []int{8, 20} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			l := landscape.New(7)
			l.AddBinding(landscape.BindingSpec{Name: "aws-full-1", Pool: awsPool, GlobalAccountID: "ga-1"})
			l.AddBinding(landscape.BindingSpec{Name: "aws-full-2", Pool: awsPool, GlobalAccountID: "ga-2"})
			for range 2 * workers {
				l.AddBinding(landscape.BindingSpec{Pool: awsPool})
			}
			s := newScene(t, l)
			for range kebLimit {
				s.placed("ga-1", "aws-full-1")
				s.placed("ga-2", "aws-full-2")
			}
			s.computeTable()
			replicas := []*replica{s.replica(s.client), s.replica(s.openClient())}

			table := s.atOnce(workers, "ga-1", func(i int, id string) provisioned {
				return s.provisionOnTheTable(replicas[i%2], id, "ga-1")
			})
			live := s.atOnce(workers, "ga-2", func(i int, _ string) provisioned {
				return s.provisionLive(replicas[i%2], "ga-2")
			})
			want := (workers + kebLimit - 1) / kebLimit
			t.Logf("%d workers at once for one GA: the table's path claimed %d accounts (%d needed), KEB's live path %d; waits p50 %.1f ms, p99 %.1f ms",
				workers, table.claims, want, live.claims, testbed.QuantileMillis(table.waits, 0.5), testbed.QuantileMillis(table.waits, 0.99))
			if table.claims != want {
				t.Errorf("the table's path claimed %d accounts for %d workers, want %d: one per limit reached", table.claims, workers, want)
			}
			for binding, n := range s.countsOf("ga-1") {
				if n > kebLimit {
					t.Errorf("%s holds %d of ga-1's clusters, above KEB's limit %d", binding, n, kebLimit)
				}
			}
		})
	}
}

// A worker took the claim's lease and died before claiming: every other
// worker is told at once to retry its step, within the lease, never sent
// to KEB's live path, which would claim a second account; once the lease
// has expired, the next retry takes the claim over.
func TestALeaseOfAClaimantThatDiedIsTakenOver(t *testing.T) {
	s := aFullGA(t, 8, 1)

	dying := s.openClient()
	dying.ClaimLease = time.Hour
	died := s.requested("ga-1")
	if pick, err := dying.NextBinding(s.ctx, s.request(died, "ga-1", awsPool)); err != nil || !pick.ClaimNew {
		t.Fatalf("the first worker's pick: %+v, %v; want ClaimNew", pick, err)
	}

	other := s.openClient()
	next := s.requested("ga-1")
	_, err := other.NextBinding(s.ctx, s.request(next, "ga-1", awsPool))
	var pending *provisioning.ClaimPendingError
	if !errors.As(err, &pending) || !errors.Is(err, provisioning.ErrClaimPending) || provisioning.LivePath(err) {
		t.Fatalf("a worker asking while the claim is held: %v; want ErrClaimPending, a retry of KEB's step", err)
	}
	if pending.Holder != died || pending.RetryAfter <= 0 || pending.RetryAfter > provisioning.DefaultClaimRetry {
		t.Fatalf("held by %q, retry after %s; want %q, a retry within (0, %s]", pending.Holder, pending.RetryAfter, died, provisioning.DefaultClaimRetry)
	}

	s.expireLease("ga-1")
	pick, err := other.NextBinding(s.ctx, s.request(next, "ga-1", awsPool))
	if err != nil || !pick.ClaimNew {
		t.Fatalf("the worker's retry after the claimant's lease expired: %+v, %v; want ClaimNew", pick, err)
	}
	if holder := s.leaseHolder("ga-1"); holder != next {
		t.Fatalf("the lease is held by %q, want %q, which took it over", holder, next)
	}
}

// A lease with less time left than ClaimRetry asks for a retry when it
// expires, not later.
func TestARetryIsAskedForNoLaterThanTheLeaseExpires(t *testing.T) {
	s := aFullGA(t, 11, 0)

	holder := s.openClient()
	holder.ClaimLease = time.Hour
	if pick, err := holder.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool)); err != nil || !pick.ClaimNew {
		t.Fatalf("the first worker's pick: %+v, %v; want ClaimNew", pick, err)
	}
	patient := s.openClient()
	patient.ClaimRetry = 2 * time.Hour
	_, err := patient.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
	var pending *provisioning.ClaimPendingError
	if !errors.As(err, &pending) || pending.RetryAfter > time.Hour || pending.RetryAfter < 59*time.Minute {
		t.Fatalf("a worker asking while a lease of an hour is held, retrying at most every 2 h: %v; want ErrClaimPending, a retry after about an hour", err)
	}
}

// A claimant that could not claim abandons its lease: the next worker
// claims at once instead of waiting for a lease of an hour.
func TestAnAbandonedClaimIsTakenAtOnce(t *testing.T) {
	s := aFullGA(t, 9, 0)

	first := s.openClient()
	first.ClaimLease = time.Hour
	req := s.request(s.requested("ga-1"), "ga-1", awsPool)
	if pick, err := first.NextBinding(s.ctx, req); err != nil || !pick.ClaimNew {
		t.Fatalf("the first worker's pick: %+v, %v; want ClaimNew", pick, err)
	}
	if err := first.AbandonClaim(s.ctx, req); err != nil {
		t.Fatal(err)
	}
	second := s.openClient()
	next := s.requested("ga-1")
	if pick, err := second.NextBinding(s.ctx, s.request(next, "ga-1", awsPool)); err != nil || !pick.ClaimNew {
		t.Fatalf("the next worker's pick after the claim was abandoned: %+v, %v; want ClaimNew", pick, err)
	}
	if holder := s.leaseHolder("ga-1"); holder != next {
		t.Fatalf("the lease is held by %q, want %q", holder, next)
	}
}

// aFullGA is a scene whose ga-1 holds one binding of the aws pool,
// aws-full, at KEB's limit, beside free bindings of the pool to claim; the
// table is computed.
func aFullGA(t *testing.T, seed uint64, free int) *scene {
	l := landscape.New(seed)
	l.AddBinding(landscape.BindingSpec{Name: "aws-full", Pool: awsPool, GlobalAccountID: "ga-1"})
	for range free {
		l.AddBinding(landscape.BindingSpec{Pool: awsPool})
	}
	s := newScene(t, l)
	for range kebLimit {
		s.placed("ga-1", "aws-full")
	}
	s.computeTable()
	return s
}

// kebLimit is KEB's limit for the GAs of these tests (kebConfig).
const kebLimit = 3

// replica is one KEB replica: its client of the table and the mutex its
// resolve step claims under.
type replica struct {
	client *provisioning.Client
	mu     sync.Mutex
}

func (s *scene) replica(c *provisioning.Client) *replica { return &replica{client: c} }

// openClient is another KEB replica's client: its own pool of connections,
// its own prepared statements.
func (s *scene) openClient() *provisioning.Client {
	s.t.Helper()
	db, err := sql.Open("postgres", s.sc.World.DatabaseURL)
	if err != nil {
		s.t.Fatal(err)
	}
	c := &provisioning.Client{DB: db, Gardener: s.keb.Gardener(), Timeout: 30 * time.Second, HoldClaims: true}
	s.t.Cleanup(func() { _ = c.Close(); _ = db.Close() })
	return c
}

// provisioned is what one worker's resolve step did.
type provisioned struct {
	binding string
	claimed bool
	// waited in KEB's queue for another worker's claim: the retry
	// intervals ErrClaimPending asked for
	waited time.Duration
	// took the whole resolve step, when measured
	took time.Duration
	err  error
}

// burst is what workers asking at once did: the accounts they claimed,
// the waits of those that waited for another's claim, and those workers'
// whole resolve steps.
type burst struct {
	claims      int
	waits       []time.Duration
	waitedSteps []time.Duration
}

// atOnce starts workers provisionings for ga together, each with its
// instance row made first, places each on its binding, and fails the test
// on any worker's error.
func (s *scene) atOnce(workers int, ga string, provision func(i int, id string) provisioned) burst {
	s.t.Helper()
	ids := make([]string, workers)
	for i := range ids {
		ids[i] = s.requested(ga)
	}
	start := make(chan struct{})
	done := make([]provisioned, workers)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			<-start
			p := provision(i, id)
			if p.err == nil {
				p.err = s.place(id, p.binding)
			}
			done[i] = p
		})
	}
	close(start)
	wg.Wait()
	var b burst
	var errs []error
	for _, p := range done {
		errs = append(errs, p.err)
		if p.claimed {
			b.claims++
		}
		if p.waited > 0 {
			b.waits = append(b.waits, p.waited)
			b.waitedSteps = append(b.waitedSteps, p.took)
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.t.Fatalf("workers for %s: %v", ga, err)
	}
	return b
}

// provisionOnTheTable is KEB's resolve step switched to the table, as the
// adoption guide writes it: the pick; on ClaimNew KEB's claim under the
// replica's mutex, then RecordClaim; on ErrClaimPending the step again
// after the interval it names, as KEB's queue retries it, for as long as
// KEB retries the step.
func (s *scene) provisionOnTheTable(r *replica, id, ga string) provisioned {
	req := s.request(id, ga, awsPool)
	var waited time.Duration
	for {
		pick, err := r.client.NextBinding(s.ctx, req)
		var pending *provisioning.ClaimPendingError
		switch {
		case errors.As(err, &pending) && waited+pending.RetryAfter <= kebrules.ResolveStepTimeout:
			waited += pending.RetryAfter
			if err := kebrules.Requeue(s.ctx, pending.RetryAfter); err != nil {
				return provisioned{err: fmt.Errorf("%s: %w", id, err)}
			}
			continue
		case err != nil:
			return provisioned{err: fmt.Errorf("%s: %w", id, err)}
		case !pick.ClaimNew:
			return provisioned{binding: pick.Binding, waited: waited}
		}
		r.mu.Lock()
		name, err := s.keb.Claim(s.ctx, ga, awsPool)
		r.mu.Unlock()
		if err != nil {
			return provisioned{err: errors.Join(fmt.Errorf("%s: claim: %w", id, err), r.client.AbandonClaim(s.ctx, req))}
		}
		limit := kebLimit
		if err := r.client.RecordClaim(s.ctx, provisioning.Claim{Request: req, BindingName: name, Limit: &limit}); err != nil {
			return provisioned{err: fmt.Errorf("%s: record the claim of %s: %w", id, name, err)}
		}
		return provisioned{binding: name, claimed: true, waited: waited}
	}
}

// provisionLive is KEB's live path: list and count outside the step's
// mutex, claim under it.
// Another replica claiming the same binding first fails the step, and KEB
// runs it again.
func (s *scene) provisionLive(r *replica, ga string) provisioned {
	for {
		v, err := s.keb.Dedicated(s.ctx, ga, awsPool)
		if err != nil || !v.Decision.ClaimNew {
			return provisioned{binding: v.Decision.Binding, err: err}
		}
		r.mu.Lock()
		name, err := s.keb.Claim(s.ctx, ga, awsPool)
		r.mu.Unlock()
		if !errors.Is(err, kebrules.ErrClaimConflicts) {
			return provisioned{binding: name, claimed: err == nil, err: err}
		}
	}
}

// place is KEB writing the resolved binding into the instance.
func (s *scene) place(id, binding string) error {
	_, err := s.db.ExecContext(s.ctx, `UPDATE instances SET subscription_secret_name = $2 WHERE instance_id = $1`, id, binding)
	return err
}

// countsOf is KEB's count of ga's active instances per binding now.
func (s *scene) countsOf(ga string) map[string]int {
	s.t.Helper()
	rows, err := s.db.QueryContext(s.ctx, `SELECT subscription_secret_name, count(*) FROM instances
		WHERE global_account_id = $1 AND subscription_secret_name <> '' AND deleted_at = '0001-01-01 00:00:00+00'
		GROUP BY subscription_secret_name`, ga)
	if err != nil {
		s.t.Fatal(err)
	}
	counts, err := kebrules.ScanCounts(rows)
	if err != nil {
		s.t.Fatal(err)
	}
	return counts
}

// leaseHolder is the instance holding ga's claim in the aws pool.
func (s *scene) leaseHolder(ga string) string {
	s.t.Helper()
	var holder string
	err := s.db.QueryRowContext(s.ctx, `SELECT instance_id FROM hap.claim_leases
		WHERE global_account_id = $1 AND hyperscaler_type = $2 AND eu_access = $3`, ga, awsPool.HyperscalerType, awsPool.EUAccess).Scan(&holder)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		s.t.Fatal(err)
	}
	return holder
}

// expireLease makes ga's claim lease in the aws pool expire now, as if its
// time had run out: the database's clock decides expiry, so the test moves
// the lease, not the clock.
func (s *scene) expireLease(ga string) {
	s.t.Helper()
	if _, err := s.db.ExecContext(s.ctx, `UPDATE hap.claim_leases SET expires_at = now()
		WHERE global_account_id = $1 AND hyperscaler_type = $2 AND eu_access = $3`, ga, awsPool.HyperscalerType, awsPool.EUAccess); err != nil {
		s.t.Fatal(err)
	}
}

// Without HoldClaims (the adoption guide's first tier) ClaimNew holds
// nothing: a second request for the same full GA gets ClaimNew too, as
// KEB's live path would tell it to claim, and no lease is left behind.
func TestWithoutHoldClaimsClaimNewHoldsNoLease(t *testing.T) {
	s := aFullGA(t, 13, 1)
	tier1 := &provisioning.Client{DB: s.db, Gardener: s.keb.Gardener(), Timeout: 30 * time.Second}
	t.Cleanup(func() { _ = tier1.Close() })
	for range 2 {
		pick, err := tier1.NextBinding(s.ctx, s.request(s.requested("ga-1"), "ga-1", awsPool))
		if err != nil || !pick.ClaimNew || !pick.Confirmed {
			t.Fatalf("a request for a full GA without HoldClaims: %+v, %v; want ClaimNew, confirmed by Gardener", pick, err)
		}
	}
	if holder := s.leaseHolder("ga-1"); holder != "" {
		t.Fatalf("the lease is held by %q without HoldClaims, want none", holder)
	}
}
