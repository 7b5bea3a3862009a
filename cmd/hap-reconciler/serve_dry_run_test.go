package main

import (
	"context"
	"net"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// serve --release-dry-run (the chart's release.dryRun): the scheduled
// release decides and audits would-releases and changes no binding.
func TestServeDryRunReleasesNothing(t *testing.T) {
	l := landscape.New(17)
	aws := hap.Pool{HyperscalerType: "aws"}
	l.AddBinding(landscape.BindingSpec{Name: "aws-empty", Pool: aws, GlobalAccountID: "ga-gone"})
	s := load(t, l, "release:\n  gracePeriod: 0s\n"+schedules("@every 1h", "@every 1h", "@every 1s", "@every 1h"))
	s.serveDryRun(t, dryRunFlags{release: true, allowNoPolicy: true})
	var outcome string
	waitFor(t, "a scheduled release to audit aws-empty", func() bool {
		history, err := s.Store(t, testContext(t)).ReleaseHistory(testContext(t))
		i := slices.IndexFunc(history, func(r hap.ReleaseRecord) bool { return r.BindingName == "aws-empty" })
		if err != nil || i < 0 {
			return false
		}
		outcome = history[i].Outcome
		return true
	})
	if outcome != hap.OutcomeWouldRelease {
		t.Fatalf("serve --release-dry-run audited %q, want %q", outcome, hap.OutcomeWouldRelease)
	}
	client, err := dynamic.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.Resource(testbed.CredentialsBindingsResource).Namespace(s.World.Namespace).Get(testContext(t), "aws-empty", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if labels := b.GetLabels(); labels[hap.LabelDirty] != "" || labels[hap.LabelTenantName] != "ga-gone" {
		t.Fatalf("serve --release-dry-run changed the binding: %v", labels)
	}
}

// serveDryRun runs serve with dry's dry-run flags on the scene until the
// test ends, and returns the base URL it serves /metrics on.
func (s *scene) serveDryRun(t *testing.T, dry dryRunFlags) string {
	t.Helper()
	env, ln := s.openToServe(t, &testbed.SyncBuffer{}, dry)
	ctx, stop := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { done <- env.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().(*net.TCPAddr).String()
}
