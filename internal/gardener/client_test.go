package gardener

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestRESTConfigReadsTheGivenKubeconfigThenKUBECONFIGElseInCluster(t *testing.T) {
	testbed.Require(t)
	want := kube.Config().Host
	t.Setenv(clientcmd.RecommendedConfigPathEnvVar, "")
	cfg, err := RESTConfig(kube.KubeconfigPath())
	if err != nil || cfg.Host != want {
		t.Fatalf("RESTConfig(path) = %v, %v; want host %s", cfg, err, want)
	}
	t.Setenv(clientcmd.RecommendedConfigPathEnvVar, kube.KubeconfigPath())
	cfg, err = RESTConfig("")
	if err != nil || cfg.Host != want {
		t.Fatalf("RESTConfig with KUBECONFIG = %v, %v; want host %s", cfg, err, want)
	}
	t.Setenv(clientcmd.RecommendedConfigPathEnvVar, "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := RESTConfig(""); err == nil {
		t.Fatal("RESTConfig outside a cluster without any kubeconfig succeeded")
	}
}

func TestAPageRequestPastItsTimeoutFailsTheList(t *testing.T) {
	testbed.Require(t)
	ns := newNamespace(t)
	c := newClient(t, ns, 0, WithRequestTimeout(time.Nanosecond))
	_, err := c.listShoots(context.Background(), func() {}, func(hap.Shoot) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the request deadline", err)
	}
}
