package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/gardener"
)

// firstFillTimeout bounds the first full list of shoots and bindings when
// watching starts: tens of thousands of production shoots take about a
// minute; much longer means something is wrong.
const firstFillTimeout = 5 * time.Minute

// Watch asks Open for Gardener lists answered from memory: shoots and
// bindings are listed once, then kept current by watching, holding only what
// decisions read. Reading one binding and changing its labels still go to
// the API server, so a release re-checks and guards its write against the
// live binding.
//
// Watching lasts as long as Context; after that, and whenever the watch is
// broken and being re-established, lists fail (after a short wait) rather
// than answer from a stale cache. Options tune the watch
// (gardener.WithChanges, say).
type Watch struct {
	Context context.Context
	Options []gardener.WatchOption
}

// watchGardener starts watching through the client and returns the watch,
// whose watcher is the port that lists from the watch caches. The first
// full list goes on in the background; Env.WaitForGardener waits for it.
func watchGardener(client *gardener.Client, w *Watch, log *zap.Logger) (*watching, error) {
	health := &watchHealthLog{log: log, broken: map[string]bool{}, stopping: w.Context}
	watcher, err := gardener.NewWatcher(client, append([]gardener.WatchOption{gardener.WithHealthChanges(health.change)}, w.Options...)...)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(w.Context)
	watcher.Start(ctx)
	return &watching{watcher: watcher, stop: stop, started: time.Now()}, nil
}

// WaitForGardener waits until the watch Open started holds the first full
// list of shoots and bindings, for at most firstFillTimeout or until ctx
// ends (SIGTERM). Without a watch there is nothing to wait for. Its error
// carries the hint of the last list the API server refused.
func (e *Env) WaitForGardener(ctx context.Context) error {
	if e.gardener == nil {
		return nil
	}
	w := e.gardener.watching()
	if w == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, firstFillTimeout)
	defer cancel()
	if err := w.watcher.WaitForSync(ctx); err != nil {
		w.stop()
		return fmt.Errorf("watching Gardener: %w", err)
	}
	e.Log.Info("watching Gardener: shoots and bindings were listed once and are kept current from now on",
		zap.Duration("firstList", time.Since(w.started)))
	return nil
}

// bindingsWatch is the watch the jobs read now; nil without one.
func (e *Env) bindingsWatch() bindingsFollower {
	if e.gardener == nil {
		return nil
	}
	if w := e.gardener.watching(); w != nil {
		return w.watcher
	}
	return nil
}

// watching is a watch Open started: the watcher lists from the watch
// caches and does everything else live, the release's last look at the
// shoots (ListShootsLive) included.
type watching struct {
	watcher *gardener.Watcher
	// stop ends the watch; the end of Watch.Context does too.
	stop    context.CancelFunc
	started time.Time
}

// watchHealthLog logs what an operator needs of the watch's health: a break
// and the recovery after it. The API server ends every watch after its
// timeout (a few minutes for shoots, gardener.DefaultBindingsWatchTimeout
// for bindings) and the watch resumes at once; that is routine and only
// logged at debug level.
type watchHealthLog struct {
	log    *zap.Logger
	mu     sync.Mutex
	broken map[string]bool
	// stopping ends with the watch: what breaks then is the shutdown
	// itself, not news.
	stopping context.Context
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
	case errors.Is(err, io.EOF), errors.Is(err, gardener.ErrWatchStopped), l.stopping.Err() != nil:
		l.log.Debug("watch of Gardener closed", res, zap.Error(err))
	default:
		// A refusal of the first list comes here too, each distinct one
		// once, with the hint a run's list gives.
		l.broken[resource] = true
		l.log.Warn("watch of Gardener broke or was refused; until it recovers, lists fail rather than answer from a stale cache", res, zap.Error(err))
	}
}
