package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// How serve proves how far the candidate table has seen Gardener's bindings
// and stamps it (candidates_computed.gardener_seen_at), so that a pick may
// trust a table that saw Gardener a moment ago without asking Gardener.
// Every candidates.gardenerSeenEvery a proof:
//
//  1. reads the database's clock, t0;
//  2. asks the API server for the bindings' current revision, R0
//     (gardener.Client.BindingsRevision): every change Gardener committed
//     before t0 has a revision no greater;
//  3. waits until the bindings cache has followed to R0 (its short
//     watches' bookmarks carry it there while nothing changes): then every
//     such change is in the cache, and counted in its changes, n;
//  4. stamps t0 when the table is a rewrite serve made of a cache that had
//     taken in at least n changes: its gather read a cache holding every
//     change before t0. A rewrite still to come after the change (serve's
//     reaction to changes reruns the candidates job) lets a later proof
//     stamp.
//
// Proofs begin on a ticker and wait side by side: one bookmark settles
// every proof waiting for it, and the newest of them is stamped. The stamp
// lands only while the table is still the rewrite it was proved for (its
// snapshot's time, db.Store.StampGardenerSeen), and every rewrite lowers
// it to its own snapshot's time, so a `run` beside serve can only make it
// older. A proof that fails (the list, the wait, the database) stamps
// nothing; a broken watch follows nowhere, so its proofs time out. The
// stamp then ages, and picks ask Gardener again.

// seenWaitTicks bounds a proof's wait for the cache, in proofs; and it
// waits at least for two bindings watches, each of which ends with a
// bookmark (gardener.DefaultBindingsWatchTimeout).
const seenWaitTicks = 3

// waitBound is how long a proof waits for the cache to follow.
func (p *seenProber) waitBound() time.Duration {
	return max(p.every*seenWaitTicks, 2*gardener.DefaultBindingsWatchTimeout)
}

// seenPoll is how often a waiting proof looks at the bindings cache.
const seenPoll = 50 * time.Millisecond

// Outcomes of a proof, the label of hap_reconciler_gardener_seen_probes_total.
const (
	SeenStamped       = "stamped"
	SeenTableBehind   = "table_behind"
	SeenTableNotOurs  = "table_not_ours"
	SeenListFailed    = "list_failed"
	SeenWatchBehind   = "watch_behind"
	SeenDatabaseError = "database_failed"
)

// SeenOutcomes are the outcomes of a proof, each exposed from the start.
var SeenOutcomes = []string{SeenStamped, SeenTableBehind, SeenTableNotOurs, SeenListFailed, SeenWatchBehind, SeenDatabaseError}

// bindingsFollower is the watch as a proof reads it (gardener.Watcher).
type bindingsFollower interface {
	BindingsRevision(ctx context.Context) (uint64, error)
	BindingsFollowed() (revision, changes uint64, err error)
	BindingsChanges() uint64
}

// seenRewrite is a rewrite of the candidate table: the watch its gather
// read, how many changes that watch's cache had taken in when the run
// began, and the time of its snapshot, which candidates_computed holds.
type seenRewrite struct {
	watch      bindingsFollower
	changes    uint64
	computedAt time.Time
}

// seenProof is what a proof established: every change Gardener committed
// before at is in watch's cache, among its first changes.
type seenProof struct {
	at      time.Time
	watch   bindingsFollower
	changes uint64
}

// decideSeen says whether a proof may stamp the table serve last wrote
// (ok: it wrote one). The stamp holds when that rewrite read the same
// watch's cache after it had taken in every change the proof counted.
func decideSeen(p seenProof, last seenRewrite, ok bool) string {
	switch {
	case !ok || last.watch != p.watch:
		// No rewrite of this watch's cache yet (a start, a new
		// kubeconfig): nothing says what the table holds.
		return SeenTableNotOurs
	case last.changes < p.changes:
		return SeenTableBehind
	}
	return SeenStamped
}

// rewrites tracks serve's candidates runs: the queue says when one begins
// (began, with the watch it will read) and the store when its rewrite
// committed (written).
type rewrites struct {
	mu      sync.Mutex
	running *seenRewrite
	last    seenRewrite
	ok      bool
}

// began records a candidates run about to gather from w, reading its count
// of changes before the gather reads the cache.
func (r *rewrites) began(w bindingsFollower) (ended func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w == nil {
		r.running = nil
		return func() {}
	}
	r.running = &seenRewrite{watch: w, changes: w.BindingsChanges()}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.running = nil
	}
}

// written records that the running run's rewrite committed, from the
// snapshot taken at computedAt.
func (r *rewrites) written(computedAt time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		return
	}
	r.last, r.ok = *r.running, true
	r.last.computedAt = computedAt
}

func (r *rewrites) lastWritten() (seenRewrite, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, r.ok
}

// rewriteNotingStore is the Store whose rewrites of the candidate table
// are told to written once committed.
type rewriteNotingStore struct {
	*db.Store
	written func(computedAt time.Time)
}

func (s rewriteNotingStore) ReplaceCandidates(ctx context.Context, rows []hap.Candidate, absorbed []string, computedAt time.Time, reservationTTL time.Duration) error {
	if err := s.Store.ReplaceCandidates(ctx, rows, absorbed, computedAt, reservationTTL); err != nil {
		return err
	}
	s.written(computedAt)
	return nil
}

// seenStore is what a proof needs of the database.
type seenStore interface {
	DatabaseTime(ctx context.Context) (time.Time, error)
	StampGardenerSeen(ctx context.Context, seenAt, computedAt time.Time) (bool, error)
}

// seenMetrics is what proofs report.
type seenMetrics interface {
	GardenerSeenProbe(outcome string)
	GardenerSeenProved(at time.Time)
	GardenerSeenStamped(since time.Time)
}

// seenProber proves and stamps, every every, until its context ends.
type seenProber struct {
	every    time.Duration
	store    seenStore
	watch    func() bindingsFollower
	rewrites *rewrites
	metrics  seenMetrics
	log      *zap.Logger

	// state is the last outcome logged, so each change is logged once.
	state string
}

// waiting is a proof begun: t0, R0, and until when it may wait.
type waiting struct {
	at       time.Time
	local    time.Time
	revision uint64
	watch    bindingsFollower
	until    time.Time
}

func (p *seenProber) run(ctx context.Context) {
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	poll := time.NewTicker(seenPoll)
	defer poll.Stop()
	var pending []waiting
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if w, ok := p.begin(ctx); ok {
				pending = append(pending, w)
			}
		case <-poll.C:
			if len(pending) == 0 {
				continue
			}
		}
		pending = p.settle(ctx, pending)
	}
}

// begin reads t0 and R0.
func (p *seenProber) begin(ctx context.Context) (waiting, bool) {
	w := p.watch()
	if w == nil {
		return waiting{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, p.waitBound())
	defer cancel()
	at, err := p.store.DatabaseTime(ctx)
	if err != nil {
		p.outcome(SeenDatabaseError, 1, err)
		return waiting{}, false
	}
	local := time.Now()
	revision, err := w.BindingsRevision(ctx)
	if err != nil {
		p.outcome(SeenListFailed, 1, err)
		return waiting{}, false
	}
	return waiting{at: at, local: local, revision: revision, watch: w, until: local.Add(p.waitBound())}, true
}

// settle decides the proofs whose wait is over: those the cache has
// followed to, at once (the newest of them is stamped), and those that
// waited too long, or whose watch was replaced, as failed.
func (p *seenProber) settle(ctx context.Context, pending []waiting) []waiting {
	w := p.watch()
	var revision, changes uint64
	var followErr error
	if w != nil {
		revision, changes, followErr = w.BindingsFollowed()
	}
	now := time.Now()
	var proved []waiting
	var expired int
	var left []waiting
	for _, q := range pending {
		switch {
		case w != nil && q.watch == w && followErr == nil && revision >= q.revision:
			proved = append(proved, q)
		case now.After(q.until) || q.watch != w || followErr != nil:
			expired++
		default:
			left = append(left, q)
		}
	}
	if expired > 0 {
		why := followErr
		if why == nil {
			why = fmt.Errorf("the bindings cache did not follow the API server within %s (at revision %d)", p.waitBound(), revision)
		}
		p.outcome(SeenWatchBehind, expired, why)
	}
	if len(proved) == 0 {
		return left
	}
	newest := proved[0]
	for _, q := range proved[1:] {
		if q.at.After(newest.at) {
			newest = q
		}
	}
	p.metrics.GardenerSeenProved(newest.at)
	proof := seenProof{at: newest.at, watch: w, changes: changes}
	last, ok := p.rewrites.lastWritten()
	outcome := decideSeen(proof, last, ok)
	if outcome == SeenStamped {
		ctx, cancel := context.WithTimeout(ctx, p.waitBound())
		defer cancel()
		stamped, err := p.store.StampGardenerSeen(ctx, newest.at, last.computedAt)
		switch {
		case err != nil:
			p.outcome(SeenDatabaseError, len(proved), err)
			return left
		case !stamped:
			// The table was rewritten elsewhere since (a `run` beside
			// serve): serve cannot speak for it.
			outcome = SeenTableNotOurs
		default:
			p.metrics.GardenerSeenStamped(newest.local)
		}
	}
	p.outcome(outcome, len(proved), nil)
	return left
}

// outcome counts n proofs and logs a change of state once: a failure as a
// warning, the first stamp after one as news, the routine rest at debug.
func (p *seenProber) outcome(outcome string, n int, err error) {
	for range n {
		p.metrics.GardenerSeenProbe(outcome)
	}
	if outcome == p.state {
		return
	}
	was := p.state
	p.state = outcome
	fields := []zap.Field{zap.String("outcome", outcome), zap.String("before", was)}
	switch {
	case err != nil:
		p.log.Warn("cannot prove how far the candidate table has seen Gardener; its stamp ages until a proof succeeds",
			append(fields, zap.Error(err))...)
	case outcome == SeenStamped && failed(was):
		p.log.Info("proving how far the candidate table has seen Gardener again; stamping it", fields...)
	default:
		if ce := p.log.Check(zapcore.DebugLevel, "how far the candidate table has seen Gardener"); ce != nil {
			ce.Write(fields...)
		}
	}
}

func failed(outcome string) bool {
	return outcome == SeenListFailed || outcome == SeenWatchBehind || outcome == SeenDatabaseError
}

var _ bindingsFollower = (*gardener.Watcher)(nil)
