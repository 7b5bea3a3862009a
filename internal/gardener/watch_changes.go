package gardener

import (
	"k8s.io/client-go/tools/cache"
)

// WithChanges calls fn after the watch caches took in a change a decision
// reads: a shoot or binding added or removed, a shoot's binding, deletion
// or runtime changed, a binding's labels or provider changed, or a whole
// relist. A shoot's status moving on calls nothing. fn must not block: it
// is called from the watch's own goroutines.
func WithChanges(fn func()) WatchOption { return func(w *Watcher) { w.onChange = fn } }

// notifyingStore is a watch cache that tells onChange what WithChanges
// describes.
type notifyingStore struct {
	cache.Store
	onChange func()
}

func (s notifyingStore) Add(obj any) error {
	err := s.Store.Add(obj)
	s.onChange()
	return err
}

func (s notifyingStore) Update(obj any) error {
	old, existed, _ := s.Store.Get(obj)
	err := s.Store.Update(obj)
	if !existed || !sameDecisionFields(old, obj) {
		s.onChange()
	}
	return err
}

func (s notifyingStore) Delete(obj any) error {
	err := s.Store.Delete(obj)
	s.onChange()
	return err
}

func (s notifyingStore) Replace(list []any, resourceVersion string) error {
	err := s.Store.Replace(list, resourceVersion)
	s.onChange()
	return err
}

// sameDecisionFields reports whether two versions of a cached object read
// the same to every decision; the resourceVersion alone does not count.
func sameDecisionFields(a, b any) bool {
	switch a := a.(type) {
	case *cachedShoot:
		b, ok := b.(*cachedShoot)
		return ok && a.shoot == b.shoot
	case *cachedBinding:
		b, ok := b.(*cachedBinding)
		if !ok || a.skipped != b.skipped {
			return false
		}
		x, y := a.binding, b.binding
		x.ResourceVersion, y.ResourceVersion = "", ""
		labelsEqual := x.Labels.Equal(y.Labels)
		x.Labels, y.Labels = nil, nil
		return labelsEqual && x.Name == y.Name && x.GlobalAccountID == y.GlobalAccountID && x.Pool == y.Pool &&
			x.ProviderType == y.ProviderType && x.Shared == y.Shared && x.Dirty == y.Dirty && x.Internal == y.Internal && x.OutOfPool == y.OutOfPool
	}
	return false
}
