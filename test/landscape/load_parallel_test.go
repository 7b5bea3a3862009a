package landscape

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRunParallelRunsEveryJobOnceAndCountsProgress(t *testing.T) {
	const n = 1000
	var ran [n]atomic.Int32
	var progressed []int
	err := runParallel(context.Background(), n, 16, func(_ context.Context, i int) error {
		ran[i].Add(1)
		return nil
	}, func(done, total int) {
		if total != n {
			t.Errorf("progress total %d, want %d", total, n)
		}
		progressed = append(progressed, done) // called under the pool's lock
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ran {
		if got := ran[i].Load(); got != 1 {
			t.Fatalf("job %d ran %d times", i, got)
		}
	}
	for k, done := range progressed {
		if done != k+1 {
			t.Fatalf("progress call %d reported %d done", k+1, done)
		}
	}
	if len(progressed) != n {
		t.Fatalf("%d progress calls, want %d", len(progressed), n)
	}
}

// After a job fails no new job starts and the first error is returned; jobs
// already running see their context cancelled.
func TestRunParallelStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var mu sync.Mutex
	started := map[int]bool{}
	err := runParallel(context.Background(), 10000, 4, func(ctx context.Context, i int) error {
		mu.Lock()
		started[i] = true
		mu.Unlock()
		if i == 10 {
			return boom
		}
		if i > 10 {
			// Anything fed after the failure must find it cancelled, not
			// run as if nothing happened.
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the first job's error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(started) > 10+1+4 {
		t.Fatalf("%d jobs started, want the pool to stop feeding after the failure", len(started))
	}
}
