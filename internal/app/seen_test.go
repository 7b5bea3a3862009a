package app

import (
	"context"
	"testing"
	"time"
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
