package gardener

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestTheBindingsCacheCatchesUpWithTheServersRevisionWhileNothingChanges(t *testing.T) {
	onBothServers(t, testBindingsCacheCatchesUp)
}

// testBindingsCacheCatchesUp: with no binding changing, the revision the
// bindings cache followed to (bookmarks of the short watches) reaches each
// revision the API server names, again and again, while the count of
// changes stays put; a binding created afterwards is counted once it is in
// the cache.
func testBindingsCacheCatchesUp(t *testing.T, server apiServer) {
	ctx := context.Background()
	l, ns := server.load(t, landscape.Options{Seed: 5, GlobalAccounts: 1})
	c := server.client(t, ns, 100)
	cfg := rest.CopyConfig(server.kube.Config())
	cfg.WarningHandler = rest.NoWarnings{}
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shoot := l.Shoots[0].Object.Name
	w, _ := startWatcher(t, c)
	rv0, before, err := w.BindingsFollowed()
	if err != nil {
		t.Fatal(err)
	}
	last := rv0
	start := time.Now()
	for round := range 2 {
		// A shoot changes, so the store's revision moves on and no binding
		// event can carry the bindings' cache there: a bookmark must.
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"hap-reconciler.kyma-project.io/round":"%d"}}}`, round)
		if _, err := d.Resource(testbed.ShootsResource).Namespace(ns).Patch(ctx, shoot, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		r0, err := w.BindingsRevision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		asked := time.Now()
		testbed.Eventually(t, 30*time.Second, fmt.Sprintf("round %d: the cache follows to revision %d", round, r0), func() (bool, string) {
			rv, _, err := w.BindingsFollowed()
			if err != nil {
				return false, err.Error()
			}
			return rv >= r0, fmt.Sprintf("at %d", rv)
		})
		if r0 <= last {
			t.Fatalf("round %d: the revision named did not move on after a shoot changed: %d, before %d", round, r0, last)
		}
		last = r0
		t.Logf("round %d: the cache reached revision %d %s after it was named", round, r0, time.Since(asked).Round(10*time.Millisecond))
	}
	t.Logf("two rounds in %s", time.Since(start).Round(10*time.Millisecond))
	if _, after, _ := w.BindingsFollowed(); after != before {
		t.Errorf("changes counted while nothing changed: %d, then %d", before, after)
	}

	server.createBinding(t, ns, "aws-counted", map[string]any{"hyperscalerType": "aws"})
	r0, err := w.BindingsRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, 30*time.Second, "the new binding is in the cache and counted", func() (bool, string) {
		rv, changes, err := w.BindingsFollowed()
		if err != nil {
			return false, err.Error()
		}
		return rv >= r0 && changes > before, fmt.Sprintf("at %d, %d changes", rv, changes)
	})
	if _, changes, _ := w.BindingsFollowed(); changes != before+1 {
		t.Errorf("one binding created: %d changes counted, want %d", changes-before, 1)
	}
}
