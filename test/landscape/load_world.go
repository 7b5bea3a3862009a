package landscape

import (
	"context"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// LoadWorld creates a fresh world in bed, named after name, and loads l into
// its Gardener namespace (LoadKube) and into its database.
func LoadWorld(ctx context.Context, bed *testbed.Bed, name string, l *Landscape) (*testbed.World, error) {
	w, err := bed.NewWorld(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := LoadKube(ctx, bed.Kube, w.Namespace, l, nil); err != nil {
		return nil, err
	}
	if err := LoadInstances(ctx, w.DatabaseURL, l); err != nil {
		return nil, err
	}
	return w, nil
}

// LoadKube loads l into namespace the way kube serves the Gardener kinds:
// through gardener-apiserver's admission when it runs the real one
// (LoadGardenerAPIServer), else as custom resources (LoadGardener).
func LoadKube(ctx context.Context, kube *testbed.Kube, namespace string, l *Landscape, progress func(done, total int)) error {
	if kube.ServesGardenerAPIServer() {
		return LoadGardenerAPIServer(ctx, kube.Config(), namespace, l, progress)
	}
	return LoadGardener(ctx, kube.Config(), namespace, l, progress)
}
