package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"
)

// fakeFollower is a watch as a proof reads it, with a count of changes set
// by the test.
type fakeFollower struct{ changes uint64 }

func (f *fakeFollower) BindingsRevision(context.Context) (uint64, error) { return 0, nil }
func (f *fakeFollower) BindingsFollowed() (uint64, uint64, error)        { return 0, f.changes, nil }
func (f *fakeFollower) BindingsChanges() uint64                          { return f.changes }

// A proof stamps the table only when serve's last rewrite read the same
// watch's cache after it held every change the proof counted.
func TestAProofStampsOnlyARewriteThatReadEveryChangeItCounted(t *testing.T) {
	w, other := &fakeFollower{}, &fakeFollower{}
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		proof seenProof
		last  seenRewrite
		ok    bool
		want  string
	}{
		{"no rewrite yet", seenProof{at: at, watch: w, changes: 0}, seenRewrite{}, false, SeenTableNotOurs},
		{"the rewrite read the same changes", seenProof{at: at, watch: w, changes: 4}, seenRewrite{watch: w, changes: 4}, true, SeenStamped},
		{"the rewrite read more", seenProof{at: at, watch: w, changes: 4}, seenRewrite{watch: w, changes: 6}, true, SeenStamped},
		{"a change the rewrite did not read", seenProof{at: at, watch: w, changes: 5}, seenRewrite{watch: w, changes: 4}, true, SeenTableBehind},
		{"the rewrite read another watch", seenProof{at: at, watch: w, changes: 1}, seenRewrite{watch: other, changes: 9}, true, SeenTableNotOurs},
	}
	for _, c := range cases {
		if got := decideSeen(c.proof, c.last, c.ok); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// The count a rewrite is remembered with is the one read when its run
// began, not when it committed; a run that wrote nothing changes nothing.
func TestARewriteIsRememberedWithTheChangesReadBeforeItsGather(t *testing.T) {
	var r rewrites
	w := &fakeFollower{changes: 3}
	computed := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

	ended := r.began(w)
	w.changes = 5 // a change while the run gathers
	r.written(computed)
	ended()
	last, ok := r.lastWritten()
	if !ok || last.changes != 3 || last.watch != w || !last.computedAt.Equal(computed) {
		t.Fatalf("after a rewrite: %+v, %v; want 3 changes, the watch and %s", last, ok, computed)
	}

	ended = r.began(w)
	ended() // failed, dry, or the lock was held: no rewrite
	r.written(computed.Add(time.Second))
	if again, _ := r.lastWritten(); again != last {
		t.Fatalf("a run that wrote nothing, or a rewrite outside a run, changed the record: %+v, want %+v", again, last)
	}
}

// fakeSeenStore is the database's clock and the stamp.
type fakeSeenStore struct {
	now     time.Time
	clock   error
	stamps  []time.Time
	refuse  bool
	stampOn []time.Time
}

func (s *fakeSeenStore) DatabaseTime(context.Context) (time.Time, error) { return s.now, s.clock }
func (s *fakeSeenStore) StampGardenerSeen(_ context.Context, seenAt, computedAt time.Time) (bool, error) {
	if s.refuse {
		return false, nil
	}
	s.stamps, s.stampOn = append(s.stamps, seenAt), append(s.stampOn, computedAt)
	return true, nil
}

type fakeSeenMetrics struct {
	outcomes map[string]int
	proved   time.Time
}

func (m *fakeSeenMetrics) GardenerSeenProbe(outcome string) { m.outcomes[outcome]++ }
func (m *fakeSeenMetrics) GardenerSeenProved(at time.Time)  { m.proved = at }
func (m *fakeSeenMetrics) GardenerSeenStamped(time.Time)    {}

// followingFake is a watch whose cache followed to revision.
type followingFake struct {
	revision, changes uint64
	named             uint64
	err               error
}

func (f *followingFake) BindingsRevision(context.Context) (uint64, error) { return f.named, f.err }
func (f *followingFake) BindingsFollowed() (uint64, uint64, error)        { return f.revision, f.changes, nil }
func (f *followingFake) BindingsChanges() uint64                          { return f.changes }

// Proofs wait side by side; the cache following settles those it reached
// and stamps the newest, on the rewrite serve last wrote; a proof that waited
// too long, or whose list failed, stamps nothing.
func TestProofsStampTheNewestTheCacheFollowedToAndNothingElse(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	w := &followingFake{revision: 10, changes: 2}
	store := &fakeSeenStore{now: t0}
	m := &fakeSeenMetrics{outcomes: map[string]int{}}
	r := &rewrites{}
	r.began(w)
	r.written(t0.Add(-time.Minute))
	p := &seenProber{every: time.Second, store: store, watch: func() bindingsFollower { return w }, rewrites: r, metrics: m, log: zap.NewNop()}

	var pending []waiting
	for i, named := range []uint64{11, 12, 13} {
		store.now, w.named = t0.Add(time.Duration(i)*time.Second), named
		q, ok := p.begin(context.Background())
		if !ok {
			t.Fatalf("proof %d did not begin", i)
		}
		pending = append(pending, q)
	}
	if pending = p.settle(context.Background(), pending); len(pending) != 3 || len(store.stamps) != 0 {
		t.Fatalf("before the cache followed: %d waiting, stamps %v", len(pending), store.stamps)
	}
	w.revision = 12
	pending = p.settle(context.Background(), pending)
	if len(pending) != 1 || len(store.stamps) != 1 || !store.stamps[0].Equal(t0.Add(time.Second)) ||
		!store.stampOn[0].Equal(t0.Add(-time.Minute)) || m.outcomes[SeenStamped] != 2 {
		t.Fatalf("once followed to 12: %d waiting, stamps %v on %v, outcomes %v; want the second proof stamped on the last rewrite",
			len(pending), store.stamps, store.stampOn, m.outcomes)
	}
	pending[0].until = time.Now().Add(-time.Millisecond)
	if pending = p.settle(context.Background(), pending); len(pending) != 0 || len(store.stamps) != 1 || m.outcomes[SeenWatchBehind] != 1 {
		t.Fatalf("a proof past its wait: %d waiting, stamps %v, outcomes %v", len(pending), store.stamps, m.outcomes)
	}

	w.err = errors.New("refused")
	if _, ok := p.begin(context.Background()); ok || m.outcomes[SeenListFailed] != 1 {
		t.Fatalf("a failed list began a proof; outcomes %v", m.outcomes)
	}
	w.err = nil
	w.changes = 3 // a change no rewrite read yet
	q, _ := p.begin(context.Background())
	w.revision = q.revision
	if p.settle(context.Background(), []waiting{q}); len(store.stamps) != 1 || m.outcomes[SeenTableBehind] != 1 {
		t.Fatalf("a table behind the cache was stamped: %v, outcomes %v", store.stamps, m.outcomes)
	}
	store.refuse = true // the table was rewritten elsewhere since
	w.changes = 2
	q, _ = p.begin(context.Background())
	if p.settle(context.Background(), []waiting{q}); m.outcomes[SeenTableNotOurs] != 1 {
		t.Fatalf("a refused stamp: outcomes %v", m.outcomes)
	}
}
