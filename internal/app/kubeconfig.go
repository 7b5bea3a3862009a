package app

import (
	"context"
	"fmt"

	"github.com/kyma-project/hap-reconciler/internal/gardener"
)

// kubeconfigFile is the kubeconfig the Gardener API was opened from, and
// the content the source in use was opened from.
//
// Kubernetes updates a mounted Secret by swapping its ..data symlink, so a
// rotated kubeconfig shows as new content under the same path. A serve
// process checks the content before each run (Env.ReloadGardener) rather
// than watching the directory: runs come every few minutes, reading a small
// file that often costs nothing, and the check happens exactly when the
// credentials are about to be used, with nothing running that could be
// holding the old ones. The CronJob's runs start from a fresh process and
// read the file anyway.
type kubeconfigFile struct {
	path string
	// fingerprint is the content the source in use was opened from; seen
	// the content at the last look.
	fingerprint, seen string
}

// changed looks at the file again and says whether its content differs
// from the one the source in use was opened from.
func (k *kubeconfigFile) changed() (bool, error) {
	seen, err := gardener.KubeconfigFingerprint(k.path)
	if err != nil {
		return false, fmt.Errorf("the kubeconfig cannot be read again: %w", err)
	}
	k.seen = seen
	return seen != k.fingerprint, nil
}

// read records that the source in use was opened from the content changed
// saw last.
func (k *kubeconfigFile) read() { k.fingerprint = k.seen }

// ReloadGardener opens the Gardener API anew when the kubeconfig it was
// opened from changed since (apiGardener.Reload). Without the API, or
// without a kubeconfig file (in-cluster, a given config), there is nothing
// to reload.
func (e *Env) ReloadGardener(ctx context.Context) error {
	if e.gardener == nil {
		return nil
	}
	return e.gardener.Reload(ctx)
}
