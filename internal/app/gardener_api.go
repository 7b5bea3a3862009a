package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// apiGardener is the Gardener API as the jobs read it for the process's
// whole life: the one port the runner holds. It reads through the source
// opened last (a client, watched or not) and owns what that source's life
// takes: its watch, and, when it was opened from a kubeconfig file, opening
// a new source when the file's content changes (Reload). The wiring never
// replaces the runner's port.
type apiGardener struct {
	log *zap.Logger
	// file is the kubeconfig the API was opened from; nil when the config
	// was given or comes from the cluster: nothing to reload.
	file *kubeconfigFile
	// open opens the API anew on another config.
	open func(*rest.Config) (gardenerSource, error)

	// reloading keeps two reloads apart; mu guards current.
	reloading sync.Mutex
	mu        sync.RWMutex
	current   *generation
}

// generation is one source the port read through, with the calls in
// flight on it: a source replaced by Reload is stopped once they ended.
type generation struct {
	gardenerSource
	calls sync.WaitGroup
}

func newAPIGardener(source gardenerSource, file *kubeconfigFile, open func(*rest.Config) (gardenerSource, error), log *zap.Logger) *apiGardener {
	return &apiGardener{log: log, file: file, open: open, current: &generation{gardenerSource: source}}
}

// use is the current source, counted in flight until done is called.
func (a *apiGardener) use() (g *generation, done func()) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	g = a.current
	g.calls.Add(1)
	return g, g.calls.Done
}

// watching is the current source's watch; nil when it lists live.
func (a *apiGardener) watching() *watching {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.current.watch
}

// Reload opens the Gardener API anew when the kubeconfig it was opened from
// changed since: a new client, and with a watch, new watch caches filled
// through it before they replace the old ones. Until the new kubeconfig
// works (it can be read, the API server answers and lets it list shoots and
// bindings, the caches fill), Gardener stays read with the one before and
// the error says why; the next call tries again. The source replaced is
// stopped once the calls in flight on it ended.
func (a *apiGardener) Reload(ctx context.Context) error {
	if a.file == nil {
		return nil
	}
	a.reloading.Lock()
	defer a.reloading.Unlock()
	changed, err := a.file.changed()
	if err != nil || !changed {
		return err
	}
	cfg, err := gardener.RESTConfig(a.file.path)
	if err != nil {
		return fmt.Errorf("the kubeconfig changed, but cannot be used: %w", err)
	}
	next, err := a.open(cfg)
	if err != nil {
		return fmt.Errorf("the kubeconfig changed, but cannot be used: %w", err)
	}
	if err := next.check(ctx); err != nil {
		next.stopWatch()
		return fmt.Errorf("the kubeconfig changed, but Gardener at %s cannot be read with it: %w", cfg.Host, err)
	}
	a.mu.Lock()
	previous := a.current
	a.current = &generation{gardenerSource: next}
	a.mu.Unlock()
	previous.calls.Wait()
	previous.stopWatch()
	a.file.read()
	a.log.Info("the kubeconfig changed: Gardener is read with the new one from now on", zap.String("server", cfg.Host),
		zap.Bool("watched", next.watch != nil))
	return nil
}

// check asks the source's API server for a shoot and a binding, and waits
// for its watch caches to fill, if it has them.
func (s gardenerSource) check(ctx context.Context) error {
	if s.live == nil {
		return errors.New("the Gardener source is not the API")
	}
	if err := s.live.CheckAccess(ctx); err != nil {
		return err
	}
	if s.watch == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, firstFillTimeout)
	defer cancel()
	return s.watch.watcher.WaitForSync(ctx)
}

func (s gardenerSource) stopWatch() {
	if s.watch != nil {
		s.watch.stop()
	}
}

// The jobs' port: each call goes to the current source.

func (a *apiGardener) ListBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) error {
	g, done := a.use()
	defer done()
	return g.port.ListBindings(ctx, onReset, fn, skipped)
}

func (a *apiGardener) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	g, done := a.use()
	defer done()
	return g.port.ListShoots(ctx, onReset, fn)
}

func (a *apiGardener) ListShootsLive(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	g, done := a.use()
	defer done()
	return g.port.ListShootsLive(ctx, onReset, fn)
}

func (a *apiGardener) GetBinding(ctx context.Context, name string) (hap.Binding, error) {
	g, done := a.use()
	defer done()
	return g.port.GetBinding(ctx, name)
}

func (a *apiGardener) MarkReleased(ctx context.Context, name, resourceVersion, releaseID string) error {
	g, done := a.use()
	defer done()
	return g.port.MarkReleased(ctx, name, resourceVersion, releaseID)
}

func (a *apiGardener) VoidRelease(ctx context.Context, name, resourceVersion, releaseID string) error {
	g, done := a.use()
	defer done()
	return g.port.VoidRelease(ctx, name, resourceVersion, releaseID)
}

func (a *apiGardener) IsConflict(err error) bool {
	g, done := a.use()
	defer done()
	return g.port.IsConflict(err)
}

func (a *apiGardener) IsNotFound(err error) bool {
	g, done := a.use()
	defer done()
	return g.port.IsNotFound(err)
}

func (a *apiGardener) IsRefused(err error) bool {
	g, done := a.use()
	defer done()
	return g.port.IsRefused(err)
}
