package landscape

import (
	"context"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// LoadWorld creates a fresh world in bed, named after name, and loads l into
// its Gardener namespace, through gardener-apiserver's admission when the bed
// runs the real one, and into its database.
func LoadWorld(ctx context.Context, bed *testbed.Bed, name string, l *Landscape) (*testbed.World, error) {
	w, err := bed.NewWorld(ctx, name)
	if err != nil {
		return nil, err
	}
	load := LoadGardener
	if bed.Kube.ServesGardenerAPIServer() {
		load = LoadGardenerAPIServer
	}
	if err := load(ctx, bed.Kube.Config(), w.Namespace, l, nil); err != nil {
		return nil, err
	}
	if err := LoadInstances(ctx, w.DatabaseURL, l); err != nil {
		return nil, err
	}
	return w, nil
}
