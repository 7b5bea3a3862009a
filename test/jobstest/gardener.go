package jobstest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Errors the fake Gardener returns; IsNotFound and IsConflict recognise them.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("the object has been modified")
	// ErrRefused is any other definite refusal of a write (forbidden,
	// invalid): IsRefused is true for it.
	ErrRefused = errors.New("the write was refused")
	// ErrAnswerLost is a write that landed whose answer never came.
	ErrAnswerLost = errors.New("connection closed before the answer arrived")
)

// Gardener is an in-memory project namespace: credentials bindings read
// from their labels as the API client reads them, and shoots.
type Gardener struct {
	mu       sync.Mutex
	bindings map[string]hap.Binding
	shoots   map[string]hap.Shoot
	version  int

	// ListErr, when set, fails every list: the picture is incomplete.
	ListErr error
	// RestartShootsAfter, when positive, makes the next shoot list start
	// over once after delivering that many shoots, as a list does whose
	// continue token expired: onReset, then every shoot again.
	RestartShootsAfter int
	// Updates counts the label updates that landed.
	Updates int
	// Mark, when set, says whether a binding's release lands and what the
	// caller hears: (true, ErrAnswerLost) is a connection cut after the API
	// server applied the write, (false, ErrAnswerLost) one cut before.
	Mark func(binding string) (land bool, err error)
	// GetErr, when set, fails every GetBinding.
	GetErr error
}

// NewGardener returns an empty namespace.
func NewGardener() *Gardener {
	return &Gardener{bindings: map[string]hap.Binding{}, shoots: map[string]hap.Shoot{}}
}

// PutBinding creates or replaces a binding with these labels.
func (g *Gardener) PutBinding(name string, labels map[string]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.putLocked(name, labels)
}

func (g *Gardener) putLocked(name string, labels map[string]string) {
	g.version++
	b, err := hap.BindingFromLabels(name, maps.Clone(labels), "", strconv.Itoa(g.version))
	if err != nil {
		panic(fmt.Sprintf("jobstest: binding %q: %v", name, err))
	}
	// Relabelling keeps the annotations, as the account cleanup does.
	b.ReleaseID = g.bindings[name].ReleaseID
	g.bindings[name] = b
}

// PutShoot creates or replaces a shoot.
func (g *Gardener) PutShoot(s hap.Shoot) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shoots[s.Name] = s
}

// DeleteShoot removes a shoot.
func (g *Gardener) DeleteShoot(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.shoots, name)
}

// Labels returns the binding's labels, or nil when it does not exist.
func (g *Gardener) Labels(name string) map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b, ok := g.bindings[name]; ok {
		return b.Labels.Map()
	}
	return nil
}

// ListBindings delivers every binding in name order.
func (g *Gardener) ListBindings(ctx context.Context, _ func(), fn func(hap.Binding) error, _ func(hap.Skipped)) error {
	return list(ctx, g, g.bindings, func(b hap.Binding) error {
		b.Labels = slices.Clone(b.Labels)
		return fn(b)
	})
}

// ListShoots delivers every shoot in name order.
func (g *Gardener) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	g.mu.Lock()
	restartAfter := g.RestartShootsAfter
	g.RestartShootsAfter = 0
	g.mu.Unlock()
	if restartAfter > 0 {
		delivered := 0
		err := list(ctx, g, g.shoots, func(s hap.Shoot) error {
			if delivered == restartAfter {
				return errRestart
			}
			delivered++
			return fn(s)
		})
		if err != nil && !errors.Is(err, errRestart) {
			return err
		}
		onReset()
	}
	return list(ctx, g, g.shoots, fn)
}

var errRestart = errors.New("continue token expired")

// list copies the objects of one kind in name order under the lock, then
// delivers them without it, so fn may change the namespace as it goes.
func list[T any](ctx context.Context, g *Gardener, objects map[string]T, fn func(T) error) error {
	g.mu.Lock()
	if g.ListErr != nil {
		g.mu.Unlock()
		return g.ListErr
	}
	items := make([]T, 0, len(objects))
	for _, name := range slices.Sorted(maps.Keys(objects)) {
		items = append(items, objects[name])
	}
	g.mu.Unlock()
	for _, item := range items {
		if err := fn(item); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// ListShootsLive is ListShoots: the fake has no cache to trail behind.
func (g *Gardener) ListShootsLive(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	return g.ListShoots(ctx, onReset, fn)
}

// GetBinding reads one binding.
func (g *Gardener) GetBinding(_ context.Context, name string) (hap.Binding, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.GetErr != nil {
		return hap.Binding{}, g.GetErr
	}
	b, ok := g.bindings[name]
	if !ok {
		return hap.Binding{}, fmt.Errorf("credentialsbinding %q: %w", name, ErrNotFound)
	}
	b.Labels = slices.Clone(b.Labels)
	return b, nil
}

// MarkReleased adds dirty: "true" and the release mark if the binding
// still has resourceVersion, as the API server's optimistic concurrency
// does.
func (g *Gardener) MarkReleased(_ context.Context, name, resourceVersion, releaseID string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, err := g.atVersionLocked(name, resourceVersion)
	if err != nil {
		return err
	}
	land := true
	if g.Mark != nil {
		land, err = g.Mark(name)
	}
	if land {
		labels := b.Labels.Map()
		labels[hap.LabelDirty] = "true"
		g.putLocked(name, labels)
		marked := g.bindings[name]
		marked.ReleaseID = releaseID
		g.bindings[name] = marked
		g.Updates++
	}
	return err
}

// VoidRelease moves the binding past resourceVersion, labels unchanged, if
// it is still there.
func (g *Gardener) VoidRelease(_ context.Context, name, resourceVersion, _ string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, err := g.atVersionLocked(name, resourceVersion)
	if err != nil {
		return err
	}
	g.putLocked(name, b.Labels.Map())
	return nil
}

// atVersionLocked returns the binding if it is still at resourceVersion,
// as the API server's optimistic concurrency allows a guarded write.
func (g *Gardener) atVersionLocked(name, resourceVersion string) (hap.Binding, error) {
	b, ok := g.bindings[name]
	switch {
	case !ok:
		return b, fmt.Errorf("credentialsbinding %q: %w", name, ErrNotFound)
	case b.ResourceVersion != resourceVersion:
		return b, fmt.Errorf("credentialsbinding %q at %s, not %s: %w", name, b.ResourceVersion, resourceVersion, ErrConflict)
	}
	return b, nil
}

func (g *Gardener) IsConflict(err error) bool { return errors.Is(err, ErrConflict) }
func (g *Gardener) IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
func (g *Gardener) IsRefused(err error) bool {
	return errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrRefused)
}
