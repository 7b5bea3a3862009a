package app

import (
	"context"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// gardenerPort fits the Gardener client to the jobs' port and logs what
// each list cost.
type gardenerPort struct {
	client *gardener.Client
	log    *zap.Logger
}

func (p *gardenerPort) ListBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) error {
	stats, err := p.client.ListBindings(ctx, onReset, fn, skipped)
	p.logList("credentialsbindings", stats, err)
	return err
}

func (p *gardenerPort) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	stats, err := p.client.ListShoots(ctx, onReset, fn)
	p.logList("shoots", stats, err)
	return err
}

// ListShootsLive is ListShoots: this port always asks the API server.
func (p *gardenerPort) ListShootsLive(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	return p.ListShoots(ctx, onReset, fn)
}

func (p *gardenerPort) GetBinding(ctx context.Context, name string) (hap.Binding, error) {
	return p.client.GetBinding(ctx, name)
}

func (p *gardenerPort) MarkReleased(ctx context.Context, name, resourceVersion, releaseID string) error {
	return p.client.MarkReleased(ctx, name, resourceVersion, releaseID)
}

func (p *gardenerPort) VoidRelease(ctx context.Context, name, resourceVersion, releaseID string) error {
	return p.client.VoidRelease(ctx, name, resourceVersion, releaseID)
}

func (p *gardenerPort) IsConflict(err error) bool { return gardener.IsConflict(err) }
func (p *gardenerPort) IsRefused(err error) bool  { return gardener.IsRefused(err) }

// IsNotFound sees through the client's wrapping to the API server's status.
func (p *gardenerPort) IsNotFound(err error) bool { return apierrors.IsNotFound(err) }

func (p *gardenerPort) logList(resource string, s gardener.ListStats, err error) {
	fields := []zap.Field{zap.String("resource", resource), zap.Int("pages", s.Pages), zap.Int("objects", s.Objects), zap.Int("restarts", s.Restarts)}
	if s.Restarts > 0 {
		p.log.Warn("list started over after its continue token expired", fields...)
	}
	if err == nil {
		p.log.Debug("listed", fields...)
	}
}
