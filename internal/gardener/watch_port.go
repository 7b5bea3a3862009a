package gardener

import (
	"context"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// ListShoots hands every cached shoot to fn in name order (see
// listShoots). The watcher's lists answer from memory; everything else it
// asks the API server through its client, the release's last look at the
// shoots (ListShootsLive) included.
func (w *Watcher) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	_, err := w.listShoots(ctx, onReset, fn)
	return w.client.explain(err, w.client.shoots.name, true)
}

// ListBindings hands every cached binding to fn, or to skipped with the
// reason a decision could misread it (see listBindings).
func (w *Watcher) ListBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) error {
	_, err := w.listBindings(ctx, onReset, fn, skipped)
	return w.client.explain(err, w.client.bindings.name, true)
}

// ListShootsLive asks the API server, as the client's ListShoots does.
func (w *Watcher) ListShootsLive(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	return w.client.ListShoots(ctx, onReset, fn)
}

// GetBinding reads the live binding, so a release re-checks against it.
func (w *Watcher) GetBinding(ctx context.Context, name string) (hap.Binding, error) {
	return w.client.GetBinding(ctx, name)
}

// MarkReleased writes through the client (Client.MarkReleased).
func (w *Watcher) MarkReleased(ctx context.Context, name, resourceVersion, releaseID string) error {
	return w.client.MarkReleased(ctx, name, resourceVersion, releaseID)
}

// VoidRelease writes through the client (Client.VoidRelease).
func (w *Watcher) VoidRelease(ctx context.Context, name, resourceVersion, releaseID string) error {
	return w.client.VoidRelease(ctx, name, resourceVersion, releaseID)
}

func (w *Watcher) IsConflict(err error) bool { return w.client.IsConflict(err) }
func (w *Watcher) IsRefused(err error) bool  { return w.client.IsRefused(err) }
func (w *Watcher) IsNotFound(err error) bool { return w.client.IsNotFound(err) }

// BindingsRevision asks the API server for the bindings' current revision
// (Client.BindingsRevision), not the watch cache.
func (w *Watcher) BindingsRevision(ctx context.Context) (uint64, error) {
	return w.client.BindingsRevision(ctx)
}
