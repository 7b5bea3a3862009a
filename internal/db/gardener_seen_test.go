package db

import (
	"database/sql"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// The stamp of how far the table has seen Gardener: only the rewrite it
// was proved for is stamped, it never goes back, and any rewrite lowers it
// to what that rewrite's snapshot can vouch for, never inventing one.
func TestGardenerSeenIsStampedOnlyOnTheRewriteItWasProvedFor(t *testing.T) {
	s, _ := migratedStore(t)
	ctx := testContext(t)
	seen := func() *time.Time {
		t.Helper()
		var at sql.NullTime
		if err := s.db.Raw("SELECT gardener_seen_at FROM hap.candidates_computed").Row().Scan(&at); err != nil {
			t.Fatal(err)
		}
		if !at.Valid {
			return nil
		}
		return &at.Time
	}
	rows := []hap.Candidate{{GlobalAccountID: "ga-a", Pool: hap.Pool{HyperscalerType: "aws"}, BindingName: "b-1", Selectable: true, Rank: 1}}
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	if stamped, err := s.StampGardenerSeen(ctx, at(0), at(0)); err != nil || stamped {
		t.Fatalf("before the first rewrite: stamped %v, %v; want nothing to stamp", stamped, err)
	}
	if err := s.ReplaceCandidates(ctx, rows, nil, at(0), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := seen(); got != nil {
		t.Fatalf("a rewrite stamped a table never stamped: %v", got)
	}
	if stamped, err := s.StampGardenerSeen(ctx, at(3*time.Second), at(-time.Second)); err != nil || stamped {
		t.Fatalf("proved for another rewrite: stamped %v, %v", stamped, err)
	}
	for _, step := range []struct {
		seenAt time.Duration
		want   time.Duration
	}{{3 * time.Second, 3 * time.Second}, {5 * time.Second, 5 * time.Second}, {4 * time.Second, 5 * time.Second}} {
		if stamped, err := s.StampGardenerSeen(ctx, at(step.seenAt), at(0)); err != nil || !stamped {
			t.Fatalf("stamping %s: stamped %v, %v", step.seenAt, stamped, err)
		}
		if got := seen(); got == nil || !got.Equal(at(step.want)) {
			t.Fatalf("after stamping %s: %v, want %v", step.seenAt, got, at(step.want))
		}
	}
	// A rewrite from a later snapshot keeps the stamp, one from an earlier
	// snapshot lowers it to that snapshot's time.
	if err := s.ReplaceCandidates(ctx, rows, nil, at(6*time.Second), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := seen(); got == nil || !got.Equal(at(5*time.Second)) {
		t.Fatalf("after a rewrite from a later snapshot: %v, want %v", got, at(5*time.Second))
	}
	if err := s.ReplaceCandidates(ctx, rows, nil, at(2*time.Second), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := seen(); got == nil || !got.Equal(at(2*time.Second)) {
		t.Fatalf("after a rewrite from an earlier snapshot: %v, want %v", got, at(2*time.Second))
	}
	if stamped, err := s.StampGardenerSeen(ctx, at(9*time.Second), at(6*time.Second)); err != nil || stamped {
		t.Fatalf("proved for the rewrite replaced since: stamped %v, %v", stamped, err)
	}
}
