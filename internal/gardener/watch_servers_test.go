package gardener

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestWatcherFollowsChangesInTheFormatEachServerOffers(t *testing.T) {
	onBothServers(t, testWatcherFollowsChanges)
}

// testWatcherFollowsChanges: the watch, as protobuf from gardener-apiserver
// and JSON from the CRD bed, follows created, relabelled and deleted
// bindings and a deleted shoot.
func testWatcherFollowsChanges(t *testing.T, server apiServer) {
	ctx := context.Background()
	l, ns := server.load(t, landscape.Options{Seed: 5, GlobalAccounts: 1})
	c, formats := server.recordingClient(t, ns, 2)
	// Once in sync the caches must stay so: a watch that could not decode
	// its events would end, and a relist would hide that from the picture.
	var mu sync.Mutex
	var broken []error
	w, _ := startWatcher(t, c, WithHealthChanges(func(resource string, err error) {
		if err != nil {
			mu.Lock()
			broken = append(broken, fmt.Errorf("%s: %w", resource, err))
			mu.Unlock()
		}
	}))
	if ok, saw := sameAsClient(ctx, c, w); !ok {
		t.Fatalf("after the first fill: %s", saw)
	}

	server.createBinding(t, ns, "aws-watched", map[string]any{"hyperscalerType": "aws"})
	server.createBinding(t, ns, "aws-gone", map[string]any{"hyperscalerType": "aws"})
	watched, err := c.GetBinding(ctx, "aws-watched")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.replaceLabels(ctx, "aws-watched", watched.ResourceVersion, map[string]string{"hyperscalerType": "aws", "tenantName": "ga-9"}); err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(server.kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Resource(testbed.CredentialsBindingsResource).Namespace(ns).Delete(ctx, "aws-gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var deleted string
	for _, s := range l.Shoots {
		if !s.Deleting {
			deleted = s.Object.Name
			break
		}
	}
	// Gardener deletes a shoot only once its deletion was confirmed.
	confirm := []byte(`{"metadata":{"annotations":{"confirmation.gardener.cloud/deletion":"true"}}}`)
	if _, err := d.Resource(testbed.ShootsResource).Namespace(ns).Patch(ctx, deleted, types.MergePatchType, confirm, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Resource(testbed.ShootsResource).Namespace(ns).Delete(ctx, deleted, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	testbed.Eventually(t, 30*time.Second, "the watcher follows every change", func() (bool, string) {
		p, err := pictureOf(ctx, w)
		if err != nil {
			return false, err.Error()
		}
		byName := map[string]hap.Binding{}
		for _, b := range p.Bindings {
			byName[b.Name] = b
		}
		_, gone := byName["aws-gone"]
		shootGone := true
		for _, s := range p.Shoots {
			// Without Gardener's controllers nothing holds the shoot back,
			// but a finalizer would leave it marked as being deleted.
			if s.Name == deleted && !s.Deleting {
				shootGone = false
			}
		}
		ok := byName["aws-watched"].GlobalAccountID == "ga-9" && !gone && shootGone
		return ok, fmt.Sprintf("bindings %+v, shoots %+v", p.Bindings, p.Shoots)
	})
	if ok, saw := sameAsClient(ctx, c, w); !ok {
		t.Fatalf("after the changes: %s", saw)
	}
	formats.assertAnswered(t, server.wantMediaType(), "list", "watch", "get")
	mu.Lock()
	defer mu.Unlock()
	if len(broken) > 0 {
		t.Fatalf("the watch broke: %v", broken)
	}
}
