package app

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func shootNames(t *testing.T, ctx context.Context, env *Env) []string {
	t.Helper()
	var names []string
	if err := env.Runner.Gardener.ListShoots(ctx, func() { names = nil }, func(s hap.Shoot) error {
		names = append(names, s.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return names
}

// Opened with a Watch, the runner's lists come from the watch: a shoot
// deleted afterwards disappears from them without another full list, while
// reading a binding still asks the API server.
func TestAWatchedGardenerServesTheRunnersListsFromTheWatch(t *testing.T) {
	testbed.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kube := testbed.KubeForTest(t)
	ns, err := kube.NewNamespace(ctx, "garden-app-watch")
	if err != nil {
		t.Fatal(err)
	}
	l := landscape.Generate(landscape.Options{Seed: 21, GlobalAccounts: 3})
	if err := landscape.LoadGardenerAPIServer(ctx, kube.Config(), ns, l, nil); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Namespace = ns
	restConfig := kube.Config()
	var lists atomic.Int64
	restConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && r.URL.Query().Get("watch") == "" && strings.HasSuffix(r.URL.Path, "/shoots") {
				lists.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	env, err := Open(ctx, Inputs{Config: cfg, RESTConfig: restConfig, Log: zap.NewNop(), Watch: &Watch{Context: ctx}}, Needs{Gardener: true})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if err := env.WaitForGardener(ctx); err != nil {
		t.Fatal(err)
	}
	firstFill := lists.Load()
	var want []string
	for _, s := range l.ExpectedShoots() {
		want = append(want, s.Name)
	}
	if got := shootNames(t, ctx, env); !slices.Equal(got, want) {
		t.Fatalf("watched shoots %v, want %v", got, want)
	}

	d, err := dynamic.NewForConfig(kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	gone := want[0]
	if err := d.Resource(testbed.ShootsResource).Namespace(ns).Delete(ctx, gone, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for slices.Contains(shootNames(t, ctx, env), gone) {
		if time.Now().After(deadline) {
			t.Fatalf("shoot %s still listed 30 s after it was deleted", gone)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := lists.Load(); n != firstFill || n == 0 {
		t.Fatalf("%d list requests for shoots after the first fill's %d: the runner's lists did not come from the watch", n-firstFill, firstFill)
	}

	// A binding created a moment ago may not be in the cache yet; a get
	// must find it anyway, because it goes to the API server. Admission
	// wants its Secret first.
	core, err := kubernetes.NewForConfig(kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws-fresh"}, StringData: map[string]string{"credentials": "placeholder"}}
	if _, err := core.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "CredentialsBinding",
		"metadata":       map[string]any{"name": "aws-fresh", "labels": map[string]any{"hyperscalerType": "aws"}},
		"provider":       map[string]any{"type": "aws"},
		"credentialsRef": map[string]any{"apiVersion": "v1", "kind": "Secret", "name": "aws-fresh", "namespace": ns},
	}}
	created, err := d.Resource(testbed.CredentialsBindingsResource).Namespace(ns).Create(ctx, fresh, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.Runner.Gardener.GetBinding(ctx, "aws-fresh")
	if err != nil || got.ResourceVersion != created.GetResourceVersion() {
		t.Fatalf("GetBinding right after create = %+v, %v; want resourceVersion %s", got, err, created.GetResourceVersion())
	}
}

func TestOnlyTheAPICanBeWatched(t *testing.T) {
	cfg := config.Default()
	cfg.Namespace = "garden-kyma"
	_, err := Open(context.Background(), Inputs{Config: cfg, Gardener: fileLike{}, Log: zap.NewNop(),
		Watch: &Watch{Context: context.Background()}}, Needs{Gardener: true})
	if err == nil || !strings.Contains(err.Error(), "watching needs the Gardener API") {
		t.Errorf("watching an export: %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fileLike stands for any Gardener source other than the API client, such
// as an export file.
type fileLike struct{ jobs.Gardener }
