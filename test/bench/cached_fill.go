package bench

import (
	"context"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"
)

// CachedFill is the least serve's first fill could cost if it let the API
// servers answer from their watch caches (resourceVersion=0) instead of
// reading consistently, as it does: shoots and bindings fetched at once in
// the job's format and thrown away undecoded. It is reported beside the
// first fill to weigh that choice; serve does not make it (see
// docs/benchmarks.md).
type CachedFill struct {
	Wall     Seconds `json:"wallSeconds"`
	Shoots   Fetch   `json:"shoots"`
	Bindings Fetch   `json:"bindings"`
}

// cachedFillRepeats is how many cached fills are measured; the median is
// reported.
const cachedFillRepeats = 3

// measureCachedFill fetches the namespace's shoots and bindings from the
// watch caches cachedFillRepeats times and returns the median.
func measureCachedFill(ctx context.Context, cfg *rest.Config, namespace string, pageSize int64) (CachedFill, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return CachedFill{}, fmt.Errorf("cached fill: http client: %w", err)
	}
	fills := make([]CachedFill, 0, cachedFillRepeats)
	for range cachedFillRepeats {
		var f CachedFill
		g, gctx := errgroup.WithContext(ctx)
		start := time.Now()
		fetchBoth(gctx, g, httpClient, cfg.Host, namespace, pageSize, acceptPreferred, cachedRead, &f.Shoots, &f.Bindings)
		if err := g.Wait(); err != nil {
			return CachedFill{}, fmt.Errorf("cached fill: %w", err)
		}
		f.Wall = since(start)
		fills = append(fills, f)
	}
	sort.Slice(fills, func(i, j int) bool { return fills[i].Wall < fills[j].Wall })
	return fills[len(fills)/2], nil
}
