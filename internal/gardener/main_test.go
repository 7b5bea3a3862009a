package gardener

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/hap-reconciler/test/gardenertest"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// kube is the test bed every test of the package shares, serving the
// Gardener kinds as CRDs; each test works in its own namespace.
var kube *testbed.Kube

// realGardener is the second test bed, serving the kinds from the real
// gardener-apiserver. It starts on first use, so that running the CRD tests
// alone does not pay for it, and TestMain stops it.
var realGardener struct {
	once sync.Once
	kube *testbed.Kube
	err  error
}

func TestMain(m *testing.M) {
	os.Exit(runWithKube(m))
}

func runWithKube(m *testing.M) int {
	if testbed.Short() {
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var err error
	kube, err = testbed.StartKube(ctx, testbed.WithGardenerKinds(testbed.KindsAsCRDs))
	if err != nil {
		fmt.Fprintf(os.Stderr, "start kube test bed: %v\n", err)
		return 1
	}
	defer stopKube("kube test bed", kube)
	defer func() {
		if realGardener.kube != nil {
			stopKube("gardener-apiserver test bed", realGardener.kube)
		}
	}()
	return m.Run()
}

func stopKube(what string, k *testbed.Kube) {
	if err := k.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop %s: %v\n", what, err)
	}
}

// apiServer is one test bed's API server as the tests use it.
type apiServer struct {
	name string
	kube *testbed.Kube
}

// crdServer is the package's CRD test bed.
func crdServer() apiServer { return apiServer{name: "crd", kube: kube} }

// gardenerAPIServer is the real gardener-apiserver's test bed, started on
// first use.
func gardenerAPIServer(t testing.TB) apiServer {
	t.Helper()
	testbed.Require(t)
	realGardener.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		realGardener.kube, realGardener.err = testbed.StartKube(ctx)
	})
	if realGardener.err != nil {
		t.Fatalf("start the gardener-apiserver test bed: %v", realGardener.err)
	}
	return apiServer{name: "gardener-apiserver", kube: realGardener.kube}
}

// onBothServers runs test as one subtest against the CRD bed and one against
// the real gardener-apiserver: what the job reads must not depend on which
// of them serves it.
func onBothServers(t *testing.T, test func(t *testing.T, s apiServer)) {
	testbed.Require(t)
	t.Run("crd", func(t *testing.T) { test(t, crdServer()) })
	t.Run("gardener-apiserver", func(t *testing.T) { test(t, gardenerAPIServer(t)) })
}

// namespace creates a fresh namespace. Its name starts with garden-, as
// Gardener requires of a project's namespace.
func (s apiServer) namespace(t *testing.T) string {
	t.Helper()
	ns, err := s.kube.NewNamespace(context.Background(), "garden-test")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func (s apiServer) client(t *testing.T, namespace string, pageSize int64, opts ...Option) *Client {
	t.Helper()
	c, err := NewClient(s.kube.Config(), namespace, pageSize, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// load loads a generated landscape into a fresh namespace, through
// admission on the real gardener-apiserver.
func (s apiServer) load(t *testing.T, opts landscape.Options) (*landscape.Landscape, string) {
	t.Helper()
	ns := s.namespace(t)
	l := landscape.Generate(opts)
	if err := landscape.LoadKube(context.Background(), s.kube, ns, l, nil); err != nil {
		t.Fatal(err)
	}
	return l, ns
}

// createBinding creates a CredentialsBinding with labels and the Secret it
// references, which gardener-apiserver's admission requires to exist.
func (s apiServer) createBinding(t *testing.T, namespace, name string, labels map[string]any) {
	t.Helper()
	ctx := context.Background()
	core, err := kubernetes.NewForConfig(s.kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"credentials": "placeholder"}}
	if _, err := core.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret %s: %v", name, err)
	}
	binding := gardenertest.Binding(name, labels)
	binding["credentialsRef"].(map[string]any)["namespace"] = namespace
	s.create(t, namespace, binding)
}

// admissionLabels are the labels gardener-apiserver's ExtensionLabels
// admission puts on every binding of providerType, on create and on each
// update; the CRD bed adds none.
func (s apiServer) admissionLabels(providerType string) map[string]string {
	if !s.kube.ServesGardenerAPIServer() {
		return nil
	}
	return map[string]string{"provider.extensions.gardener.cloud/" + providerType: "true"}
}

// create creates a fixture given as a plain map.
func (s apiServer) create(t *testing.T, namespace string, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	gvr := testbed.ShootsResource
	if u.GetKind() == "CredentialsBinding" {
		gvr = testbed.CredentialsBindingsResource
	}
	d, err := dynamic.NewForConfig(s.kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	created, err := d.Resource(gvr).Namespace(namespace).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return created
}

// The CRD bed's shorthands, which most tests use.

func newNamespace(t *testing.T) string { return crdServer().namespace(t) }

func newClient(t *testing.T, namespace string, pageSize int64, opts ...Option) *Client {
	t.Helper()
	return crdServer().client(t, namespace, pageSize, opts...)
}

func loadLandscape(t *testing.T, opts landscape.Options) (*landscape.Landscape, string) {
	t.Helper()
	return crdServer().load(t, opts)
}

func createObject(t *testing.T, namespace string, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	return crdServer().create(t, namespace, obj)
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
