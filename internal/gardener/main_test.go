package gardener

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// kube is the one test bed every test of the package shares; each test works
// in its own namespace.
var kube *testbed.Kube

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
	kube, err = testbed.StartKube(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "start kube test bed: %v\n", err)
		return 1
	}
	defer func() {
		if err := kube.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop kube test bed: %v\n", err)
		}
	}()
	return m.Run()
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns, err := kube.NewNamespace(context.Background(), "gardener-test")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func newClient(t *testing.T, namespace string, pageSize int64, opts ...Option) *Client {
	t.Helper()
	c, err := NewClient(kube.Config(), namespace, pageSize, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// createObject creates a fixture given as a plain map.
func createObject(t *testing.T, namespace string, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	gvr := testbed.ShootsResource
	if u.GetKind() == "CredentialsBinding" {
		gvr = testbed.CredentialsBindingsResource
	}
	created, err := dynamicClient(t).Resource(gvr).Namespace(namespace).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return created
}

func bindingFixture(name string, labels map[string]any) map[string]any {
	return map[string]any{
		"apiVersion":     "security.gardener.cloud/v1alpha1",
		"kind":           "CredentialsBinding",
		"metadata":       map[string]any{"name": name, "labels": labels},
		"provider":       map[string]any{"type": "aws"},
		"credentialsRef": map[string]any{"apiVersion": "v1", "kind": "Secret", "name": name},
	}
}
