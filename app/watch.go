package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/gardener"
	"github.com/kyma-project/hap-reconciler/hap"
	"github.com/kyma-project/hap-reconciler/jobs"
)

// firstFillTimeout bounds the first full list of shoots and bindings when
// watching starts: tens of thousands of production shoots take about a
// minute; much longer means something is wrong.
const firstFillTimeout = 5 * time.Minute

// WatchGardener makes the runner's shoot and binding lists answer from
// memory: shoots and bindings are listed once, then kept current by
// watching, holding only what decisions read. Reading one binding and
// changing its labels still go to the API server, so a release re-checks
// and guards its write against the live binding.
//
// Call it once, before the first run. Watching lasts as long as ctx; after
// that, and whenever the watch is broken and being re-established, lists
// fail (after a short wait) rather than answer from a stale cache. opts
// tune the watch (gardener.WithChanges, say).
func (e *Env) WatchGardener(ctx context.Context, opts ...gardener.WatchOption) error {
	live, rewrap, err := e.liveGardener()
	if err != nil {
		return err
	}
	health := &watchHealthLog{log: e.Log, broken: map[string]bool{}}
	w, err := gardener.NewWatcher(live.client, append([]gardener.WatchOption{gardener.WithHealthChanges(health.change)}, opts...)...)
	if err != nil {
		return err
	}
	watchCtx, stop := context.WithCancel(ctx)
	start := time.Now()
	w.Start(watchCtx)
	syncCtx, cancel := context.WithTimeout(ctx, firstFillTimeout)
	defer cancel()
	if err := w.WaitForSync(syncCtx); err != nil {
		stop()
		return fmt.Errorf("watching Gardener: %w", err)
	}
	e.Log.Info("watching Gardener: shoots and bindings were listed once and are kept current from now on",
		zap.Duration("firstList", time.Since(start)))
	e.Runner.Gardener = rewrap(&watchedPort{gardenerPort: live, watcher: w, stop: stop})
	return nil
}

// liveGardener finds the API client behind the runner's Gardener port and
// returns how to put a replacement in its place, keeping the wrapping that
// explains failures.
func (e *Env) liveGardener() (*gardenerPort, func(jobs.Gardener) jobs.Gardener, error) {
	switch g := e.Runner.Gardener.(type) {
	case *gardenerPort:
		return g, func(w jobs.Gardener) jobs.Gardener { return w }, nil
	case explainingGardener:
		if live, ok := g.Gardener.(*gardenerPort); ok {
			return live, func(w jobs.Gardener) jobs.Gardener { g.Gardener = w; return g }, nil
		}
		return nil, nil, fmt.Errorf("watching needs the Gardener API, but this job reads Gardener from %T", g.Gardener)
	case nil:
		return nil, nil, errors.New("watching needs the Gardener API, but this job was opened without Gardener")
	}
	return nil, nil, fmt.Errorf("watching needs the Gardener API, but this job reads Gardener from %T", e.Runner.Gardener)
}

// watchedPort lists from the watch caches and does everything else live,
// the release's last look at the shoots (ListShootsLive) included.
type watchedPort struct {
	*gardenerPort
	watcher *gardener.Watcher
	// stop ends the watch; the context WatchGardener was given does too.
	stop context.CancelFunc
}

func (p *watchedPort) ListBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) error {
	_, err := p.watcher.ListBindings(ctx, onReset, fn, skipped)
	return err
}

func (p *watchedPort) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	_, err := p.watcher.ListShoots(ctx, onReset, fn)
	return err
}

// watchHealthLog logs what an operator needs of the watch's health: a break
// and the recovery after it. The API server ends every watch after a few
// minutes and the watch resumes at once; that is routine and only logged at
// debug level.
type watchHealthLog struct {
	log    *zap.Logger
	mu     sync.Mutex
	broken map[string]bool
}

func (l *watchHealthLog) change(resource string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := zap.String("resource", resource)
	switch {
	case err == nil && l.broken[resource]:
		l.broken[resource] = false
		l.log.Info("watch of Gardener recovered; lists answer again", res)
	case err == nil:
		l.log.Debug("watch of Gardener in sync", res)
	case errors.Is(err, io.EOF), errors.Is(err, gardener.ErrWatchStopped):
		l.log.Debug("watch of Gardener closed", res, zap.Error(err))
	default:
		l.broken[resource] = true
		l.log.Warn("watch of Gardener broke; until it recovers, lists fail rather than answer from a stale cache", res, zap.Error(err))
	}
}
