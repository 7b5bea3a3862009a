package gardener

import (
	"fmt"
)

// BindingsFollowed says how far the bindings cache has followed the API
// server: revision is that of the last event or bookmark the reflector
// took in (of the list, after a relist; 0 before the first), and changes
// counts the changes a decision reads it applied to the cache
// (BindingsChanges). The reflector stores an event before it records the
// event's revision, and the revision is read before the count: every
// change up to revision is in the cache and counted in changes.
//
// Once revision is at least a revision BindingsRevision returned, the cache
// holds every change to the bindings the API server committed before that
// list was sent. It fails once the watch was stopped.
func (w *Watcher) BindingsFollowed() (revision uint64, changes uint64, err error) {
	k := w.bindings
	rv := k.reflector.LastSyncResourceVersion()
	changes = k.changes.Load()
	if k.source.health.isStopped() {
		return 0, 0, fmt.Errorf("%s: %w", k.source.res.name, ErrWatchStopped)
	}
	revision, err = parseRevision(rv)
	if err != nil {
		return 0, 0, fmt.Errorf("%s cache: %w", k.source.res.name, err)
	}
	return revision, changes, nil
}

// BindingsChanges counts the changes a decision reads that the bindings
// cache took in so far: a binding added, removed, claimed, relabelled, and
// every relist (WithChanges). A list of the cache begun after reading n
// holds at least the first n of them.
func (w *Watcher) BindingsChanges() uint64 { return w.bindings.changes.Load() }
