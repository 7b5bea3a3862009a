package testscene

import (
	"context"
	"testing"

	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// AddShoot adds a shoot to the scene's landscape and creates it in
// Gardener, through admission on the real gardener-apiserver, and returns
// its name.
func (s *Scene) AddShoot(t *testing.T, ctx context.Context, spec landscape.ShootSpec) string {
	t.Helper()
	shoot := s.Landscape.AddShoot(spec)
	if err := landscape.CreateShoot(ctx, s.Bed.Kube, s.World.Namespace, shoot); err != nil {
		t.Fatal(err)
	}
	return shoot.Object.Name
}

// AddBinding adds a binding to the scene's landscape and creates it in
// Gardener, with the Secret the real gardener-apiserver's admission wants.
func (s *Scene) AddBinding(t *testing.T, ctx context.Context, spec landscape.BindingSpec) {
	t.Helper()
	if err := landscape.CreateBinding(ctx, s.Bed.Kube, s.World.Namespace, s.Landscape.AddBinding(spec)); err != nil {
		t.Fatal(err)
	}
}
