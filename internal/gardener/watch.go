package gardener

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// ErrWatchStopped means the watcher's context ended: its caches are no
// longer kept current and are not read any more.
var ErrWatchStopped = errors.New("the watch of Gardener was stopped")

// defaultSyncWait is how long a list from the watch caches waits for a
// broken watch to recover before it fails.
const defaultSyncWait = 30 * time.Second

// Watcher keeps the namespace's shoots and bindings current by watching them
// after one full list, holding only what decisions read. Its lists answer
// from memory with the client's list methods, so a long-running process
// pays the full list once instead of every cycle.
//
// A list never returns a partial or stale picture: until both the first list
// and the watch on top of it are in place, and again while a broken watch
// reconnects or lists anew, a list waits (at most the sync wait, and never
// past its context) and then fails.
type Watcher struct {
	client   *Client
	syncWait time.Duration
	onHealth func(resource string, err error)
	onChange func()
	// bindingsWatchTimeout is how long each watch of bindings lasts.
	bindingsWatchTimeout time.Duration
	shoots               *watchedKind
	bindings             *watchedKind
	start                sync.Once
}

// watchedKind is one kind's cache and what keeps it current.
type watchedKind struct {
	store     cache.Store
	source    *watchSource
	reflector *cache.Reflector
	// changes counts the changes a decision reads that the cache took in
	// (WithChanges describes them), each counted once it is in the store.
	changes atomic.Uint64
}

// DefaultBindingsWatchTimeout is how long each watch of bindings lasts
// before the API server ends it and the watch resumes from where it was.
// The API server sends a bookmark two seconds before a watch's deadline
// (and otherwise about once a minute): a short watch makes the cache's
// resourceVersion follow the API server's every few seconds even while no
// binding changes, which is what proves how far the cache has seen
// (BindingsFollowed). Shoots keep the reflector's long watches.
const DefaultBindingsWatchTimeout = 3 * time.Second

// WatchOption tunes a Watcher.
type WatchOption func(*Watcher)

// withSyncWait bounds how long a list waits for the caches to be in sync
// (default defaultSyncWait).
func withSyncWait(d time.Duration) WatchOption { return func(w *Watcher) { w.syncWait = d } }

// WithHealthChanges calls fn whenever a kind's cache starts or stops being
// readable: err is nil when it is in sync again and says why otherwise. A
// watch the API server closes after its timeout ends with io.EOF and is
// resumed at once; that is routine, not a failure.
func WithHealthChanges(fn func(resource string, err error)) WatchOption {
	return func(w *Watcher) { w.onHealth = fn }
}

// NewWatcher prepares watches of c's namespace; Start begins them. The
// watches use c's connection settings and page size, and the lists of c
// itself for the first fill and every refill.
func NewWatcher(c *Client, opts ...WatchOption) (*Watcher, error) {
	if c == nil {
		return nil, errors.New("gardener watcher: client is nil")
	}
	w := &Watcher{client: c, syncWait: defaultSyncWait, bindingsWatchTimeout: DefaultBindingsWatchTimeout}
	for _, opt := range opts {
		opt(w)
	}
	if w.syncWait <= 0 {
		return nil, fmt.Errorf("gardener watcher: sync wait %s is not positive", w.syncWait)
	}
	if w.bindingsWatchTimeout <= 2*time.Second {
		return nil, fmt.Errorf("gardener watcher: bindings watch timeout %s is not longer than the API server's 2s before a deadline", w.bindingsWatchTimeout)
	}
	w.shoots = w.newKind(c.shoots, &cachedShoot{}, func(ctx context.Context) ([]runtime.Object, string, error) {
		var items []runtime.Object
		stats, err := listPaged(ctx, c, c.shoots, func() { items = items[:0] }, func(item wire.ShootItem) error {
			// A listed shoot's resourceVersion is left out of the cache: the
			// reflector resumes from the list's, and 100,000 of them add up.
			items = append(items, newCachedShoot(item, ""))
			return nil
		})
		return items, stats.ResourceVersion, err
	}, decodeShootEvent, 0)
	w.bindings = w.newKind(c.bindings, &cachedBinding{}, func(ctx context.Context) ([]runtime.Object, string, error) {
		var items []runtime.Object
		stats, err := listPaged(ctx, c, c.bindings, func() { items = items[:0] }, func(item wire.BindingItem) error {
			items = append(items, newCachedBinding(item))
			return nil
		})
		return items, stats.ResourceVersion, err
	}, decodeBindingEvent, w.bindingsWatchTimeout)
	return w, nil
}

// newKind prepares one kind's cache; watchTimeout, when not 0, is how long
// each of its watches lasts instead of the reflector's few minutes.
func (w *Watcher) newKind(res resource, expected runtime.Object,
	list func(context.Context) ([]runtime.Object, string, error), decode func(wire.Format, []byte) (runtime.Object, error),
	watchTimeout time.Duration) *watchedKind {
	source := &watchSource{client: w.client, res: res, list: list, decode: decode, health: newHealth(res.name, w.onHealth),
		watchTimeout: watchTimeout}
	k := &watchedKind{source: source}
	// The count goes up before onChange hears of the change: whoever
	// reads the count on hearing of it counts the change in.
	k.store = notifyingStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc), onChange: func() {
		k.changes.Add(1)
		if w.onChange != nil {
			w.onChange()
		}
	}}
	k.reflector = cache.NewReflectorWithOptions(source, expected, k.store, cache.ReflectorOptions{
		Name:            "hap-reconciler/" + res.name,
		TypeDescription: res.name,
	})
	// The streaming "watch list" would hand the reflector full objects
	// through another code path; the paged list is what is measured.
	useWatchList := false
	k.reflector.UseWatchList = &useWatchList
	return k
}

// Start lists and then watches both kinds until ctx ends; it returns at
// once. Once ctx ended, every list fails with ErrWatchStopped.
func (w *Watcher) Start(ctx context.Context) {
	w.start.Do(func() {
		// The watcher reports through its health, not klog: without this
		// the reflector would write its own log lines to stderr beside
		// the job's structured log.
		ctx = klog.NewContext(ctx, logr.Discard())
		for _, k := range []*watchedKind{w.shoots, w.bindings} {
			go func() {
				k.reflector.RunWithContext(ctx)
				k.source.health.stop()
			}()
		}
	})
}

// WaitForSync returns once both caches hold a full list with a watch on
// top, or with an error when ctx ends first.
func (w *Watcher) WaitForSync(ctx context.Context) error {
	for _, k := range []*watchedKind{w.shoots, w.bindings} {
		if err := k.source.health.wait(ctx); err != nil {
			return fmt.Errorf("waiting for the first list of Gardener: %w", err)
		}
	}
	return nil
}

// listShoots hands every cached shoot to fn in name order, as listShoots of
// the client does, and never calls onReset: the cache is whole or the list
// fails.
func (w *Watcher) listShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) (ListStats, error) {
	if onReset == nil || fn == nil {
		return ListStats{}, errors.New("list shoots: onReset and fn must not be nil")
	}
	objs, err := w.snapshot(ctx, w.shoots)
	if err != nil {
		return ListStats{}, fmt.Errorf("list shoots from the watch cache: %w", err)
	}
	var stats ListStats
	for _, o := range objs {
		if err := fn(o.(*cachedShoot).shoot); err != nil {
			return stats, err
		}
		stats.Objects++
	}
	return stats, nil
}

// listBindings hands every cached binding to fn, or to skipped with the
// reason a decision could misread it, in name order as the client does.
func (w *Watcher) listBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) (ListStats, error) {
	if onReset == nil || fn == nil || skipped == nil {
		return ListStats{}, errors.New("list credentials bindings: onReset, fn and skipped must not be nil")
	}
	objs, err := w.snapshot(ctx, w.bindings)
	if err != nil {
		return ListStats{}, fmt.Errorf("list credentials bindings from the watch cache: %w", err)
	}
	var stats ListStats
	for _, o := range objs {
		b := o.(*cachedBinding)
		if b.skipped != "" {
			skipped(hap.Skipped{Kind: wire.CredentialsBindingKind, Name: b.Name, Reason: b.skipped})
		} else if err := fn(b.binding); err != nil {
			return stats, err
		}
		stats.Objects++
	}
	return stats, nil
}

// snapshot waits until k's cache may be read and copies its objects out,
// sorted by name. The store swaps in a relist's result whole, so whatever
// moment the copy is taken at, it is one complete picture.
func (w *Watcher) snapshot(ctx context.Context, k *watchedKind) ([]any, error) {
	waitCtx, cancel := context.WithTimeout(ctx, w.syncWait)
	defer cancel()
	if err := k.source.health.wait(waitCtx); err != nil {
		return nil, err
	}
	objs := k.store.List()
	slices.SortFunc(objs, func(a, b any) int {
		return strings.Compare(a.(interface{ GetName() string }).GetName(), b.(interface{ GetName() string }).GetName())
	})
	return objs, nil
}
