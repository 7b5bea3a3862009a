package landscape

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
)

// runParallel calls job for 0..n-1 on at most workers goroutines and stops
// at the first error. progress, when not nil, is called after each job that
// succeeded, from one goroutine at a time, with the number done so far.
func runParallel(ctx context.Context, n, workers int, job func(ctx context.Context, i int) error, progress func(done, total int)) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var (
		mu   sync.Mutex
		done int
	)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			// Admitted while another job was failing: do not start.
			if err := gctx.Err(); err != nil {
				return err
			}
			if err := job(gctx, i); err != nil {
				return err
			}
			if progress != nil {
				mu.Lock()
				done++
				progress(done, n)
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("load landscape: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("load landscape: %w", err)
	}
	return nil
}
