package gardener

import (
	"context"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// The Client and the Watcher are each a Gardener source as the jobs read it
// (the port jobs.Gardener, whose types are hap's): their lists hand over
// decisions' objects and return a failure that says what to check
// (explain.go). The package does not import internal/jobs; the wiring
// holds each source as that port, which checks the fit when it compiles.

// ListShoots hands every shoot of the namespace to fn, page by page, and
// logs what the list cost.
//
// When the list has to start over (its continue token expired), onReset is
// called first and the caller must forget every shoot fn received so far:
// afterwards fn sees each shoot exactly once. Any error ends the list and is
// returned; the caller must then discard what it received.
func (c *Client) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	stats, err := c.listShoots(ctx, onReset, fn)
	c.logList(c.shoots.name, stats, err)
	return c.explain(err, c.shoots.name, true)
}

// ListShootsLive is ListShoots: the client always asks the API server.
func (c *Client) ListShootsLive(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	return c.ListShoots(ctx, onReset, fn)
}

// ListBindings hands every CredentialsBinding of the namespace to fn, page
// by page, and logs what the list cost. A binding whose labels a decision
// could misread goes to skipped with the reason instead, and the list goes
// on. onReset works as for ListShoots and covers both fn and skipped.
func (c *Client) ListBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) error {
	stats, err := c.listBindings(ctx, onReset, fn, skipped)
	c.logList(c.bindings.name, stats, err)
	return c.explain(err, c.bindings.name, true)
}

// GetBinding reads one binding. Unlike a list, labels a decision could
// misread are an error here: the caller asked for this very binding.
func (c *Client) GetBinding(ctx context.Context, name string) (hap.Binding, error) {
	b, err := c.getBinding(ctx, name)
	return b, c.explain(err, c.bindings.name, false)
}

// MarkReleased and VoidRelease are bindings.go's: a write's failure needs
// no hint, the release reads it with IsConflict and IsRefused.

// IsConflict reports whether err is an optimistic-concurrency conflict.
func (c *Client) IsConflict(err error) bool { return isConflict(err) }

// IsRefused reports whether err is the API server's definite refusal of a
// write (see isRefused).
func (c *Client) IsRefused(err error) bool { return isRefused(err) }

// IsNotFound sees through the client's wrapping to the API server's status.
func (c *Client) IsNotFound(err error) bool { return apierrors.IsNotFound(err) }

func (c *Client) logList(resource string, s ListStats, err error) {
	fields := []zap.Field{zap.String("resource", resource), zap.Int("pages", s.Pages), zap.Int("objects", s.Objects), zap.Int("restarts", s.Restarts)}
	if s.Restarts > 0 {
		c.log.Warn("list started over after its continue token expired", fields...)
	}
	if err == nil {
		c.log.Debug("listed", fields...)
	}
}
