package provisioning_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// layout is the bindings of the rewrite tests: a shared pool and one GA,
// with room for every pick.
var layout = []hap.Candidate{
	candidate("", "s-1", 0, 1, nil),
	candidate("", "s-2", 0, 2, nil),
	candidate("ga-a", "a-1", 0, 1, limit(1000)),
	candidate("ga-a", "a-2", 0, 2, limit(1000)),
}

// recount is one job run: read KEB's table, count each binding, rewrite
// the candidates, absorbing the reservations the read saw.
func (b *bed) recount(ctx context.Context) error {
	read, err := b.store.ReadInstanceCounts(ctx)
	if err != nil {
		return err
	}
	active := map[string]int{}
	for _, c := range read.Counts {
		active[c.BindingName] += c.Active
	}
	rows := make([]hap.Candidate, len(layout))
	for i, c := range layout {
		c.DBCount, c.EffectiveCount = active[c.BindingName], active[c.BindingName]
		rows[i] = c
	}
	return b.store.ReplaceCandidates(ctx, rows, read.Absorbed, read.TakenAt, ttl)
}

// Picks, KEB writing instances, and job runs all at once: afterwards every
// pick is counted exactly once, either as an instance or as a reservation.
func TestRewritesDuringPicksLoseNoReservation(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	if err := b.recount(ctx); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	rewriterDone := make(chan error, 1)
	var rewrites atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				rewriterDone <- nil
				return
			default:
			}
			if err := b.recount(ctx); err != nil {
				rewriterDone <- err
				return
			}
			rewrites.Add(1)
		}
	}()

	const workers, perWorker = 12, 20
	var mu sync.Mutex
	picked := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				id := fmt.Sprintf("w%d-%d", w, i)
				ga := []string{"", "ga-a"}[i%2]
				name, claimNew, err := b.pick(ctx, id, ga)
				if err != nil || claimNew {
					errs <- fmt.Errorf("pick %s: %q, claimNew %v, %v", id, name, claimNew, err)
					return
				}
				mu.Lock()
				picked[name]++
				mu.Unlock()
				// KEB's resolve step writes most bindings into their rows
				// soon after; some not yet.
				if i%3 != 0 {
					if _, err := b.keb.ExecContext(ctx, `UPDATE instances SET subscription_secret_name = $2, updated_at = now()
						WHERE instance_id = $1`, id, name); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-rewriterDone; err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d rewrites ran during %d picks", rewrites.Load(), workers*perWorker)
	if rewrites.Load() < 2 {
		t.Fatalf("only %d rewrites overlapped the picks; the test proves nothing", rewrites.Load())
	}
	if err := b.recount(ctx); err != nil {
		t.Fatal(err)
	}

	rows, err := b.store.Candidates(ctx, hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range rows {
		if r.EffectiveCount+r.Reserved != picked[r.BindingName] {
			t.Errorf("%s: %d instances + %d reserved, but %d picks returned it",
				r.BindingName, r.EffectiveCount, r.Reserved, picked[r.BindingName])
		}
		total += picked[r.BindingName]
	}
	if total != workers*perWorker {
		t.Errorf("picks on known bindings: %d of %d", total, workers*perWorker)
	}
}

func TestReservationIsAbsorbedOnceItsInstanceShowsUp(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	for i := range 7 {
		b.writeInstance(t, fmt.Sprintf("old-%d", i), "ga-a", "b-1")
	}
	layout := []hap.Candidate{candidate("ga-a", "b-1", 0, 1, limit(10))}
	recount := func() {
		t.Helper()
		read, err := b.store.ReadInstanceCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		row := layout[0]
		for _, c := range read.Counts {
			row.DBCount += c.Active
			row.EffectiveCount += c.Active
		}
		b.replace(t, []hap.Candidate{row}, read.Absorbed)
	}
	recount()

	b.mustPick(t, "new-1", "ga-a")
	b.writeInstance(t, "new-1", "ga-a", "b-1")
	recount()
	rows, err := b.store.Candidates(ctx, "ga-a")
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].EffectiveCount != 8 || rows[0].Reserved != 0 {
		t.Fatalf("after KEB wrote the instance: %d counted + %d reserved, want 8 + 0", rows[0].EffectiveCount, rows[0].Reserved)
	}
	// 8 of 10: exactly two more fit.
	b.mustPick(t, "new-2", "ga-a")
	b.mustPick(t, "new-3", "ga-a")
	if name, claimNew, err := b.pick(ctx, "new-4", "ga-a"); err != nil || !claimNew {
		t.Fatalf("pick beyond the limit: %q, claimNew %v, %v; want claimNew", name, claimNew, err)
	}
}

// A reader counting the candidate rows while the job rewrites them sees the
// old table or the new one, never a table on its way.
func TestReadersNeverSeeAHalfWrittenTable(t *testing.T) {
	b := newBed(t)
	ctx := testContext(t)
	rowsFor := func(gas int) []hap.Candidate {
		var rows []hap.Candidate
		for ga := range gas {
			for n := range 2 {
				rows = append(rows, candidate(fmt.Sprintf("ga-%d", ga), fmt.Sprintf("b-%d-%d", ga, n), n, n+1, limit(10)))
			}
		}
		return rows
	}
	small, large := rowsFor(1000), rowsFor(1500)
	// The rewrites alone are under test: KEB's instances are not seeded,
	// and the test has a deadline of its own, long enough for a busy
	// machine.
	ctx = testbed.Context(t, 15*time.Minute)
	rewrite := func(rows []hap.Candidate) {
		t.Helper()
		if err := b.store.ReplaceCandidates(ctx, rows, nil, time.Now(), ttl); err != nil {
			t.Fatalf("ReplaceCandidates: %v", err)
		}
	}
	rewrite(small)

	stop := make(chan struct{})
	type sighting struct {
		reads, bad, last int
		err              error
	}
	seen := make(chan sighting, 1)
	go func() {
		var s sighting
		defer func() { seen <- s }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var n int
			if err := b.keb.QueryRowContext(ctx, "SELECT count(*) FROM hap.binding_candidates").Scan(&n); err != nil {
				s.err = err
				return
			}
			s.reads++
			if n != len(small) && n != len(large) {
				s.bad++
				s.last = n
			}
		}
	}()
	for i := range 20 {
		rewrite([][]hap.Candidate{large, small}[i%2])
	}
	close(stop)
	s := <-seen
	t.Logf("%d reads during 20 rewrites", s.reads)
	if s.err != nil {
		t.Fatalf("the reader failed after %d reads: %v", s.reads, s.err)
	}
	if s.bad != 0 {
		t.Fatalf("reader saw %d row counts other than %d or %d (last %d)", s.bad, len(small), len(large), s.last)
	}
	if s.reads == 0 {
		t.Fatal("the reader never read")
	}
}
