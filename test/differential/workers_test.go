package differential

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// burstWorkers is how many of KEB's workers resolve runtimes of one GA and
// pool at once in a burst, spread over the two replicas.
const burstWorkers = 8

// stepRetries is how often KEB runs its resolve step for one provisioning:
// every 10 s for a minute (resolveSubscriptionSecretRetryInterval,
// resolveSubscriptionSecretTimeout).
const stepRetries = 6

// replica is one KEB replica: its client of the table and the mutex its
// resolve step claims under.
type replica struct {
	client *provisioning.Client
	mu     sync.Mutex
}

// worker is what one of KEB's workers did in a burst: the answer it acted
// on, where it went and whether it claimed an account.
type worker struct {
	c    *cluster
	pick provisioning.Pick
	err  error
	// fromTable: the binding or the claim is the table's answer, not KEB's
	// live path's after a hand-off.
	fromTable     bool
	binding       string
	claimed       bool
	failed        string
	pendingRounds int
	waited        time.Duration
	// at is when the table's last answer came back.
	at    time.Time
	fault error
}

// workersAtOnce is burstWorkers of KEB's workers, on two replicas,
// resolving runtimes of one GA and pool at the same moment (a pipeline
// creating clusters in parallel), each following the adoption guide: the
// table's pick; on ClaimNew KEB's claim under its replica's mutex, then
// RecordClaim (AbandonClaim when the pool is empty); on ErrClaimPending the
// step again after the interval it names, as KEB's queue retries it; on a hand-off KEB's live path. The burst
// is judged as a whole once every worker is done: the table's claims
// against the accounts the burst needs, each binding against its limit and
// its labels now. Beside it, the accounts KEB's live path claims when its
// workers decide at once on the burst's starting state (each lists and
// counts outside the step's mutex and claims under it): the anchor.
func (s *stream) workersAtOnce(ctx context.Context) error {
	ga, p := s.chooseGA(), s.choosePool()
	workers := make([]*worker, burstWorkers)
	for i := range workers {
		c, err := s.request(ctx, ga, p, false)
		if err != nil {
			return err
		}
		workers[i] = &worker{c: c}
	}
	want, err := s.keb.Dedicated(ctx, ga, p)
	if err != nil {
		return err
	}
	shoots, err := s.keb.ShootsPerBinding(ctx)
	if err != nil {
		return err
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Go(func() {
			<-start
			s.resolveAsWorker(ctx, s.replicas[i%len(s.replicas)], w)
			s.resolved(ctx, w)
		})
	}
	close(start)
	wg.Wait()
	s.note("%d workers at once for %s in %s; KEB at the start %s %v", burstWorkers, ga, p, want, want.Counts)
	for _, w := range workers {
		if w.fault != nil {
			return w.fault
		}
	}
	if err := s.judgeBurst(ctx, want, shoots, workers); err != nil {
		return err
	}
	for _, w := range workers {
		if err := s.actOn(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// resolveAsWorker is one worker's resolve step, retried as KEB retries it:
// after the interval ErrClaimPending names, for as long as KEB retries the
// step. It touches nothing of the stream's but w: workers run at once.
func (s *stream) resolveAsWorker(ctx context.Context, r *replica, w *worker) {
	req := s.requestFor(w.c)
	for {
		w.pick, w.err = r.client.NextBinding(ctx, req)
		w.at = time.Now()
		var pending *provisioning.ClaimPendingError
		switch {
		case errors.As(w.err, &pending) && w.waited+pending.RetryAfter > kebrules.ResolveStepTimeout:
			w.failed = "the claim stayed pending for the step's every retry"
		case errors.As(w.err, &pending):
			w.pendingRounds++
			w.waited += pending.RetryAfter
			if err := kebrules.Requeue(ctx, pending.RetryAfter); err != nil {
				w.fault = err
				return
			}
			continue
		case unexpected(w.err):
			w.fault = fmt.Errorf("worker pick for %s: %w", w.c.instanceID, w.err)
		case errors.Is(w.err, provisioning.ErrGuarded):
			w.failed = "guarded"
		case provisioning.LivePath(w.err):
			s.resolveLive(ctx, r, w)
		case w.pick.ClaimNew:
			w.fromTable = true
			s.claimAsWorker(ctx, r, w, &req)
		default:
			w.fromTable, w.binding = true, w.pick.Binding
		}
		return
	}
}

// resolveLive is KEB's live path for a worker the table handed off: its
// rules on the live state now, a claim without RecordClaim.
func (s *stream) resolveLive(ctx context.Context, r *replica, w *worker) {
	v, err := s.keb.Dedicated(ctx, w.c.ga, w.c.pool)
	switch {
	case err != nil:
		w.fault = err
	case v.Guarded:
		w.failed = "guarded"
	case v.ClaimNew:
		s.claimAsWorker(ctx, r, w, nil)
	default:
		w.binding = v.Binding
	}
}

// claimAsWorker is KEB's claim under the replica's mutex, recorded in the
// table when req is given.
func (s *stream) claimAsWorker(ctx context.Context, r *replica, w *worker, req *provisioning.Request) {
	var name string
	var err error
	for range stepRetries {
		r.mu.Lock()
		name, err = s.keb.Claim(ctx, w.c.ga, w.c.pool)
		r.mu.Unlock()
		if !errors.Is(err, kebrules.ErrClaimConflicts) {
			break // else the other replica claimed first: KEB retries the step
		}
	}
	switch {
	case errors.Is(err, kebrules.ErrPoolEmpty):
		w.failed = "no free binding to claim"
		if req != nil {
			w.fault = r.client.AbandonClaim(ctx, *req)
		}
		return
	case err != nil:
		w.fault = err
		return
	}
	w.binding, w.claimed = name, true
	if req != nil {
		w.fault = s.recordClaimOn(ctx, r.client, *req, name)
	}
}

// resolved is the end of a worker's resolve step once it has a binding:
// KEB writes it into the instance at once (updateInstance), so the
// burst's other workers count it; the runtime's shoot comes after the
// burst (actOn).
func (s *stream) resolved(ctx context.Context, w *worker) {
	if w.fault == nil && w.failed == "" && w.binding != "" {
		w.fault = s.writeBinding(ctx, w.c, w.binding)
	}
}

// judgeBurst classifies every worker's answer and counts the burst.
//   - A binding from the table must be the GA's and not dirty now, and the
//     table's workers together must not fill it past KEB's limit from its
//     count at the start.
//   - The table's claims must be the accounts the burst needs: the table's
//     workers beyond the room below the limit at the start that the burst's
//     workers on KEB's live path left, one account per limit. A claim more
//     is needless, unless Gardener's shoots filled a binding KEB's count
//     left room on (the job's deviation).
//   - Stale tables, hand-offs and the guard are judged as a single pick's.
func (s *stream) judgeBurst(ctx context.Context, want kebrules.Verdict, shoots map[string]int, workers []*worker) error {
	fromTable, liveOnHeld := 0, 0
	placedBy := map[string]int{}
	for _, w := range workers {
		switch {
		case w.fromTable:
			fromTable++
			if w.binding != "" {
				placedBy[w.binding]++
			}
		case !w.claimed && slices.Contains(want.Held, w.binding):
			// A worker handed to KEB's live path placed on a binding the
			// GA held at the start: room the table's workers then lacked.
			liveOnHeld++
		}
	}
	needed := accountsNeeded(want, fromTable, liveOnHeld, want.Counts)
	withShoots := map[string]int{}
	for _, b := range want.Held {
		withShoots[b] = max(want.Counts[b], shoots[b])
	}
	neededByShoots := accountsNeeded(want, fromTable, liveOnHeld, withShoots)
	b := &s.tally.Bursts
	b.Bursts++
	b.Workers += len(workers)
	switch {
	case want.ClaimNew:
		b.ClaimsOnKEBsLivePathAtOnce += len(workers)
	case want.Limit > 0 && want.Binding != "":
		b.OverTheLimitOnKEBsLivePathAtOnce += max(0, len(workers)-(want.Limit-want.Counts[want.Binding]))
	}
	b.AccountsNeeded += needed
	claims := 0
	for _, w := range workers {
		b.PendingRetries += w.pendingRounds
		if w.waited > 0 {
			b.waits = append(b.waits, w.waited)
		}
		outcome, err := s.judgeWorker(ctx, want, w, placedBy)
		if err != nil {
			return err
		}
		// An account claimed on the table's answer; a ClaimNew that found
		// the pool empty claimed none (claimsFailedPoolEmpty counts it).
		if w.fromTable && w.claimed {
			b.ClaimsOnTheTablesPath++
			claims++
			switch {
			case claims > neededByShoots:
				outcome = outcomeNeedlessClaim + ": " + causeUnexplained
			case claims > needed:
				outcome = diffGardenerFull
			}
		}
		s.tally.add(s.phase, outcome, func() string {
			return fmt.Sprintf("seed %d, action %d, burst worker %s (ga %s, pool %s): table %s, KEB at the burst's start %s (held %v, counts %v, limit %d), %d of %d table answers, %d accounts needed%s",
				s.tally.Seed, len(s.log), w.c.instanceID, w.c.ga, w.c.pool, pickCase{got: w.pick, err: w.err}.answer(), want,
				want.Held, want.Counts, want.Limit, fromTable, len(workers), needed, s.evidence(ctx, pickCase{c: w.c}))
		})
	}
	return nil
}

// accountsNeeded is how many accounts n placements of the GA need beyond
// the room its bindings have below KEB's limit by counts, less the taken
// places other placements filled: one per limit. A GA off the allowlist
// has no limit and needs one only when it holds none.
func accountsNeeded(v kebrules.Verdict, n, taken int, counts map[string]int) int {
	if n == 0 || v.Guarded {
		return 0
	}
	if v.Limit == 0 {
		if len(v.Held) == 0 {
			return 1
		}
		return 0
	}
	room := 0
	for _, b := range v.Held {
		room += max(0, v.Limit-counts[b])
	}
	room = max(0, room-taken)
	return (max(0, n-room) + v.Limit - 1) / v.Limit
}

// judgeWorker classifies one worker's answer on its own: what the burst's
// claims count leaves out.
func (s *stream) judgeWorker(ctx context.Context, want kebrules.Verdict, w *worker, placedBy map[string]int) (string, error) {
	switch {
	case !w.fromTable:
		return s.judge(ctx, pickCase{c: w.c, got: w.pick, err: w.err, want: want, at: w.at})
	case w.pick.ClaimNew:
		return outcomeAgree, nil // the burst's claims are counted together
	}
	b, err := s.keb.Bindings.Get(ctx, w.binding, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get binding %s: %w", w.binding, err)
	}
	dirty := b.GetLabels()[hap.LabelDirty] != ""
	foreign := kebrules.TenantOf(b.GetLabels()) != w.c.ga
	switch {
	case (foreign || dirty) && s.unseenBy(w.pick, w.at, w.binding):
		return diffUnseenChange, nil
	case foreign:
		return outcomeCrossTenant, nil
	case dirty:
		return outcomeDirtyUsed, nil
	case want.Limit > 0 && want.Counts[w.binding]+placedBy[w.binding] > want.Limit:
		return outcomeOverFilled, nil
	case w.binding == want.Binding || !slices.Contains(want.Held, w.binding):
		// Not among the bindings at the start: claimed by another worker
		// of the burst, which the claims count judges.
		return outcomeAgree, nil
	}
	return diffInFlight, nil
}

// actOn is the rest of a worker's resolve step: its runtime placed, or its
// provisioning failed.
func (s *stream) actOn(ctx context.Context, w *worker) error {
	if w.claimed && w.failed == "" {
		s.note("claimed %s for %s (%s) in a burst, recorded %t", w.binding, w.c.ga, w.c.instanceID, w.fromTable)
	}
	switch {
	case w.failed == "no free binding to claim":
		s.tally.ClaimsFailed++
		return s.fail(ctx, w.c, w.failed)
	case w.failed != "":
		return s.fail(ctx, w.c, w.failed)
	}
	return s.place(ctx, w.c, w.binding)
}

// burstTally is what the bursts of workers did, beside KEB's live path on
// the same bursts.
type burstTally struct {
	Bursts  int `json:"bursts"`
	Workers int `json:"workers"`
	// ClaimsOnTheTablesPath are the accounts the table's answers claimed.
	ClaimsOnTheTablesPath int `json:"accountsClaimedOnTheTablesPath"`
	// AccountsNeeded are the accounts the bursts needed: the workers on
	// the table's path beyond the room below the limit, one per limit.
	AccountsNeeded int `json:"accountsNeeded"`
	// ClaimsOnKEBsLivePathAtOnce are the accounts KEB's live path claims
	// for the same bursts when its workers decide at once: every worker
	// of a burst whose starting state says ClaimNew claims one.
	ClaimsOnKEBsLivePathAtOnce int `json:"accountsKEBsLivePathClaimsDecidingAtOnce"`
	// OverTheLimitOnKEBsLivePathAtOnce are the clusters KEB's live path
	// places past the limit in the same bursts: every worker of a burst
	// whose starting state names a binding below the limit is placed on it.
	OverTheLimitOnKEBsLivePathAtOnce int `json:"clustersKEBsLivePathPlacesPastTheLimitDecidingAtOnce"`
	// PendingRetries are the step retries ErrClaimPending caused.
	PendingRetries int     `json:"stepRetriesForAPendingClaim"`
	WaitP50Millis  float64 `json:"waitForAnotherWorkersClaimP50Millis"`
	WaitP99Millis  float64 `json:"waitForAnotherWorkersClaimP99Millis"`
	waits          []time.Duration
}

// summarize fills the wait quantiles.
func (b *burstTally) summarize() {
	b.WaitP50Millis, b.WaitP99Millis = testbed.QuantileMillis(b.waits, 0.5), testbed.QuantileMillis(b.waits, 0.99)
}
