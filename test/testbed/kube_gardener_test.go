package testbed

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// One test covers the gardener-apiserver bed's life: its start costs
// seconds more than the CRD bed's.
func TestGardenerBedServesTheKindsFromGardenerAPIServerWithAdmissionOn(t *testing.T) {
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	started := time.Now()
	k, err := StartKube(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Stop() })
	t.Logf("etcd, kube-apiserver and gardener-apiserver ready in %s", time.Since(started).Round(time.Millisecond))
	if !k.ServesGardenerAPIServer() {
		t.Fatal("ServesGardenerAPIServer() = false")
	}
	dyn, err := dynamic.NewForConfig(k.Config())
	if err != nil {
		t.Fatal(err)
	}

	// The kinds are aggregated, served by the gardener-apiserver Service,
	// not local CRDs.
	for _, gv := range gardenerAPIGroupVersions {
		svc, err := dyn.Resource(apiServicesResource).Get(ctx, apiServiceName(gv), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if name, _, _ := unstructured.NestedString(svc.Object, "spec", "service", "name"); name != gardenerServiceName {
			t.Errorf("APIService %s is served by %q, want the %s Service", svc.GetName(), name, gardenerServiceName)
		}
	}

	// Admission is on: what the CRD bed stores without a question is
	// refused, a binding whose Secret is missing and a shoot in a namespace
	// no Project owns.
	ns, err := k.NewNamespace(ctx, "garden-bed")
	if err != nil {
		t.Fatal(err)
	}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion":     "security.gardener.cloud/v1alpha1",
		"kind":           "CredentialsBinding",
		"metadata":       map[string]any{"name": "aws-0001"},
		"provider":       map[string]any{"type": "aws"},
		"credentialsRef": map[string]any{"apiVersion": "v1", "kind": "Secret", "name": "aws-0001", "namespace": ns},
	}}
	_, err = dyn.Resource(CredentialsBindingsResource).Namespace(ns).Create(ctx, binding, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("binding on a missing secret: err = %v, want admission to refuse it", err)
	}
	shoot := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.gardener.cloud/v1beta1",
		"kind":       "Shoot",
		"metadata":   map[string]any{"name": "c-1234567"},
		"spec": map[string]any{
			"cloudProfile": map[string]any{"kind": "CloudProfile", "name": "aws"},
			"region":       "eu-central-1",
			"kubernetes":   map[string]any{"version": "1.32.6"},
			"provider":     map[string]any{"type": "aws"},
		},
	}}
	_, err = dyn.Resource(ShootsResource).Namespace(ns).Create(ctx, shoot, metav1.CreateOptions{})
	if err == nil {
		t.Error("a shoot without project, cloud profile or networking was admitted")
	}

	// Each API server can fail and come back alone; StartServer returns
	// once the kinds list through kube-apiserver again.
	listShoots := func(ctx context.Context) error {
		_, err := dyn.Resource(ShootsResource).Namespace(ns).List(ctx, metav1.ListOptions{})
		return err
	}
	for _, s := range []APIServer{KubeAPIServer, GardenerAPIServer} {
		for _, fault := range []struct {
			name string
			down func(APIServer) error
		}{{"stopped", k.StopServer}, {"killed", k.KillServer}} {
			if err := fault.down(s); err != nil {
				t.Fatalf("%s %s: %v", fault.name, s, err)
			}
			if err := listShoots(ctx); err == nil {
				t.Errorf("shoots listed with %s %s", s, fault.name)
			} else if s == GardenerAPIServer && !apierrors.IsServiceUnavailable(err) {
				t.Errorf("with gardener-apiserver %s: %v, want kube-apiserver's 503", fault.name, err)
			}
			if err := k.StartServer(ctx, s); err != nil {
				t.Fatalf("start %s after it was %s: %v", s, fault.name, err)
			}
			if err := listShoots(ctx); err != nil {
				t.Errorf("list right after %s came back from being %s: %v", s, fault.name, err)
			}
		}
		if err := k.PauseServer(s); err != nil {
			t.Fatal(err)
		}
		stalled, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := listShoots(stalled)
		cancel()
		if err == nil {
			t.Errorf("shoots listed with %s paused", s)
		}
		if err := k.ResumeServer(s); err != nil {
			t.Fatal(err)
		}
		if err := listShoots(ctx); err != nil {
			t.Errorf("list after %s resumed: %v", s, err)
		}
	}

	pids := k.PIDs()
	if len(pids) != 3 {
		t.Fatalf("PIDs() = %v, want etcd, kube-apiserver and gardener-apiserver", pids)
	}
	if err := k.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Stop (kill 0: %v)", pid, err)
		}
	}
}
