package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// blockedShoots holds a shoot list in flight until released.
type blockedShoots struct {
	jobs.Gardener
	entered, release chan struct{}
}

func (b *blockedShoots) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	close(b.entered)
	<-b.release
	return b.Gardener.ListShoots(ctx, onReset, fn)
}

// A kubeconfig rotated while a list is in flight: the next calls go to the
// source opened on the new kubeconfig at once, and the one replaced is
// stopped only after the list on it ended, never under it.
func TestAReplacedGardenerSourceIsStoppedOnlyAfterTheCallsInFlightOnItEnd(t *testing.T) {
	testbed.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kube := testbed.KubeForTest(t)
	ns, err := kube.NewNamespace(ctx, "garden-app-reload")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := os.ReadFile(kube.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	fingerprint, err := gardener.KubeconfigFingerprint(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Namespace = ns
	open := func(rc *rest.Config) (gardenerSource, error) {
		return openGardener(Inputs{Config: cfg, RESTConfig: rc, Log: zap.NewNop()})
	}
	first, err := open(kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	blocked := &blockedShoots{Gardener: first.port, entered: make(chan struct{}), release: make(chan struct{})}
	first.port = blocked
	api := newAPIGardener(first, &kubeconfigFile{path: path, fingerprint: fingerprint, seen: fingerprint}, open, zap.NewNop())
	none := func(hap.Shoot) error { return nil }

	listed := make(chan error, 1)
	go func() { listed <- api.ListShoots(ctx, func() {}, none) }()
	<-blocked.entered
	if err := os.WriteFile(path, append(kubeconfig, "\n# rotated\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	reloaded := make(chan error, 1)
	go func() { reloaded <- api.Reload(ctx) }()
	testbed.Eventually(t, time.Minute, "the source opened on the new kubeconfig to take the calls", func() (bool, string) {
		g, done := api.use()
		defer done()
		return g.port != blocked, "the first source"
	})
	if err := api.ListShoots(ctx, func() {}, none); err != nil {
		t.Fatalf("a list through the new source: %v", err)
	}
	select {
	case err := <-reloaded:
		t.Fatalf("Reload returned (%v) while a list on the source it replaced was still in flight", err)
	default:
	}
	close(blocked.release)
	if err := <-listed; err != nil {
		t.Fatalf("the list in flight on the replaced source: %v", err)
	}
	if err := <-reloaded; err != nil {
		t.Fatalf("Reload: %v", err)
	}
}
