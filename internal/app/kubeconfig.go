package app

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/gardener"
)

// kubeconfigFile is the kubeconfig the Gardener API was opened from, as it
// read then, and how to open the API anew on another config.
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
	path        string
	fingerprint string
	open        func(*rest.Config) (gardenerSource, error)
}

// ReloadGardener opens the Gardener API anew when the kubeconfig it was
// opened from changed since: a new client, and with a watch, new watch
// caches filled through it before they replace the old ones. Until the new
// kubeconfig works (it can be read, the API server answers and lets it list
// shoots and bindings, the caches fill), Gardener stays read with the one
// before and the error says why; the next call tries again. Without a
// kubeconfig file (in-cluster, export files, a given config) there is
// nothing to reload. It must not run alongside a run.
func (e *Env) ReloadGardener(ctx context.Context) error {
	k := e.kubeconfig
	if k == nil {
		return nil
	}
	fingerprint, err := gardener.KubeconfigFingerprint(k.path)
	if err != nil {
		return fmt.Errorf("the kubeconfig cannot be read again: %w", err)
	}
	if fingerprint == k.fingerprint {
		return nil
	}
	cfg, err := gardener.RESTConfig(k.path)
	if err != nil {
		return fmt.Errorf("the kubeconfig changed, but cannot be used: %w", err)
	}
	next, err := k.open(cfg)
	if err != nil {
		return fmt.Errorf("the kubeconfig changed, but cannot be used: %w", err)
	}
	if err := e.checkSource(ctx, next); err != nil {
		if next.watch != nil {
			next.watch.stop()
		}
		return fmt.Errorf("the kubeconfig changed, but Gardener at %s cannot be read with it: %w", cfg.Host, err)
	}
	previous := e.watch
	e.Runner.Gardener, e.watch = next.port, next.watch
	if previous != nil {
		previous.stop()
	}
	k.fingerprint = fingerprint
	e.Log.Info("the kubeconfig changed: Gardener is read with the new one from now on", zap.String("server", cfg.Host),
		zap.Bool("watched", next.watch != nil))
	return nil
}

// checkSource asks the new source's API server for a shoot and a binding,
// and waits for its watch caches to fill, if it has them.
func (e *Env) checkSource(ctx context.Context, next gardenerSource) error {
	if next.live == nil {
		return errors.New("the Gardener source is not the API")
	}
	if err := next.live.CheckAccess(ctx); err != nil {
		return err
	}
	if next.watch == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, firstFillTimeout)
	defer cancel()
	return next.watch.watcher.WaitForSync(ctx)
}
