package db

import (
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// The pool history keeps one sample per pool and instant; the retention
// step forgets the old ones (TestEveryTableStaysWithinItsBoundOverManyRuns).
func TestPoolHistoryRecordsOneSamplePerPoolAndInstant(t *testing.T) {
	s, _ := migratedStore(t)
	ctx := testContext(t)
	aws := hap.Pool{HyperscalerType: "aws"}
	day := 24 * time.Hour
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	stats := func(free, claimed int) []hap.PoolStats {
		return []hap.PoolStats{
			{PoolKey: hap.PoolKey{Pool: aws}, Free: free, Claimed: claimed},
			{PoolKey: hap.PoolKey{Pool: hap.Pool{HyperscalerType: "azure"}, Shared: true}, SharedBindings: 3},
		}
	}
	for i := range 100 {
		if err := s.RecordPoolSamples(ctx, start.Add(time.Duration(i)*day), stats(100-i, i)); err != nil {
			t.Fatal(err)
		}
	}
	// The same instant again replaces, never duplicates.
	last := start.Add(99 * day)
	if err := s.RecordPoolSamples(ctx, last, stats(1, 99)); err != nil {
		t.Fatal(err)
	}
	history, err := s.PoolHistory(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 1 {
		t.Fatalf("pools %v: shared pools have no free bindings to record", history)
	}
	got := history[aws]
	if len(got) != 100 || !got[0].At.Equal(start) || got[99].Free != 1 || got[99].Claimed != 99 {
		t.Fatalf("%d samples from %s to %+v; want 100, every day's, the last replaced", len(got), got[0].At, got[len(got)-1])
	}
	recent, err := s.PoolHistory(ctx, last.Add(-2*day))
	if err != nil || len(recent[aws]) != 3 {
		t.Fatalf("samples since two days before the last: %v, %v", recent[aws], err)
	}
}
