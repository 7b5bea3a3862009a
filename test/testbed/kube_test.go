package testbed

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// One test covers the whole life of a Kube: starting one costs seconds on a
// two-core machine.
func TestKubeServesGardenerKindsRestartsAndStopsWithoutLeftovers(t *testing.T) {
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	k, err := StartKube(ctx, WithGardenerKinds(KindsAsCRDs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Stop() })

	// The kubeconfig file is usable by any client, not only through Config.
	cfg, err := clientcmd.BuildConfigFromFlags("", k.KubeconfigPath())
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := k.NewNamespace(ctx, "kube-test")
	if err != nil {
		t.Fatal(err)
	}
	shoot := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.gardener.cloud/v1beta1",
		"kind":       "Shoot",
		"metadata":   map[string]any{"name": "c-1234567"},
		"spec": map[string]any{
			"credentialsBindingName": "aws-0001",
			"provider":               map[string]any{"type": "aws", "workers": []any{map[string]any{"name": "cpu-worker-0"}}},
		},
		"status": map[string]any{"technicalID": "shoot--kyma--c-1234567"},
	}}
	if _, err := dyn.Resource(ShootsResource).Namespace(ns).Create(ctx, shoot, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create shoot: %v", err)
	}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion":     "security.gardener.cloud/v1alpha1",
		"kind":           "CredentialsBinding",
		"metadata":       map[string]any{"name": "aws-0001", "labels": map[string]any{"hyperscalerType": "aws"}},
		"provider":       map[string]any{"type": "aws"},
		"credentialsRef": map[string]any{"apiVersion": "v1", "kind": "Secret", "name": "aws-0001", "namespace": ns},
	}}
	if _, err := dyn.Resource(CredentialsBindingsResource).Namespace(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create credentials binding: %v", err)
	}

	// Unknown fields survive: fixtures rely on it to be production-sized.
	got, err := dyn.Resource(ShootsResource).Namespace(ns).Get(ctx, "c-1234567", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id, _, _ := unstructured.NestedString(got.Object, "status", "technicalID"); id != "shoot--kyma--c-1234567" {
		t.Fatalf("status.technicalID = %q, unknown fields were pruned", id)
	}

	// The API server alone can go away and come back with the data intact.
	if err := k.StopServer(KubeAPIServer); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(ShootsResource).Namespace(ns).Get(ctx, "c-1234567", metav1.GetOptions{}); err == nil {
		t.Fatal("get succeeded with the API server stopped")
	}
	if err := k.StartServer(ctx, KubeAPIServer); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(ShootsResource).Namespace(ns).Get(ctx, "c-1234567", metav1.GetOptions{}); err != nil {
		t.Fatalf("get after API server restart: %v", err)
	}

	// etcd takes a landscape larger than its default 2 GiB quota.
	if quota := etcdMetric(t, k.EtcdURL(), "etcd_server_quota_backend_bytes"); quota != etcdQuotaBytes {
		t.Errorf("etcd's backend quota is %v bytes, want %d", quota, etcdQuotaBytes)
	}

	pids := k.PIDs()
	if len(pids) != 2 {
		t.Fatalf("PIDs() = %v, want etcd and kube-apiserver", pids)
	}
	apiHost, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	etcdHost, err := url.Parse(k.EtcdURL())
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := k.Stop(); err != nil {
		t.Fatalf("second stop: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Stop (kill 0: %v)", pid, err)
		}
	}
	for _, addr := range []string{apiHost.Host, etcdHost.Host} {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after Stop", addr)
		}
	}
	if _, err := os.Stat(k.dir); !os.IsNotExist(err) {
		t.Errorf("test bed dir %s still exists after Stop (stat: %v)", k.dir, err)
	}
}

// etcdMetric reads one unlabelled gauge from etcd's metrics page.
func etcdMetric(t *testing.T, etcdURL, name string) float64 {
	t.Helper()
	resp, err := http.Get(etcdURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(page), "\n") {
		if value, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", name, err)
			}
			return v
		}
	}
	t.Fatalf("etcd has no metric %s", name)
	return 0
}

func TestStartKubeFailureReportsTheLogAndLeavesNothingRunning(t *testing.T) {
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	base := t.TempDir()
	_, err := StartKube(ctx, WithBaseDir(base), WithGardenerKinds(NoGardenerKinds), WithAPIServerArgs("--no-such-flag=1"))
	if err == nil {
		t.Fatal("StartKube succeeded with an unknown kube-apiserver flag")
	}
	if !strings.Contains(err.Error(), "no-such-flag") {
		t.Fatalf("error does not carry the log tail naming the bad flag: %v", err)
	}
	left, readErr := os.ReadDir(base)
	if readErr != nil {
		t.Fatal(readErr)
	}
	if len(left) != 0 {
		t.Fatalf("failed start left %d entries in %s", len(left), base)
	}
	if pids := processesMentioning(t, base); len(pids) != 0 {
		t.Fatalf("processes %v still run with %s on their command line", pids, base)
	}
}
