package gardener

import (
	"context"
	"maps"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/hap-reconciler/test/gardenertest"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestMarkReleasedMarksTheBindingAndRefusesAStaleResourceVersion(t *testing.T) {
	onBothServers(t, testMarkReleased)
}

func testMarkReleased(t *testing.T, server apiServer) {
	ctx := context.Background()
	ns := server.namespace(t)
	server.createBinding(t, ns, "aws-0001", map[string]any{"hyperscalerType": "aws", "tenantName": "ga-1"})
	c, formats := server.recordingClient(t, ns, 0)
	// Reads as the server offers them, writes in JSON on either server.
	defer formats.assertAnswered(t, runtime.ContentTypeJSON, "patch")
	defer formats.assertAnswered(t, server.wantMediaType(), "get")

	read, err := c.GetBinding(ctx, "aws-0001")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MarkReleased(ctx, "aws-0001", read.ResourceVersion, "17"); err != nil {
		t.Fatal(err)
	}
	after, err := c.GetBinding(ctx, "aws-0001")
	if err != nil {
		t.Fatal(err)
	}
	// dirty is added and tenantName kept, as KEB's free step does; Gardener
	// adds its own label.
	want := map[string]string{"hyperscalerType": "aws", "tenantName": "ga-1", "dirty": "true"}
	maps.Copy(want, server.admissionLabels("aws"))
	if !reflect.DeepEqual(after.Labels.Map(), want) || !after.Dirty || after.ReleaseID != "17" {
		t.Fatalf("after the release the binding is %+v, want labels %v and release 17", after, want)
	}

	// A second writer still holding the first read loses, and changes nothing.
	err = c.VoidRelease(ctx, "aws-0001", read.ResourceVersion, "17")
	if !isConflict(err) {
		t.Fatalf("void with stale resourceVersion: err = %v, want a conflict", err)
	}
	unchanged, err := c.GetBinding(ctx, "aws-0001")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unchanged.Labels.Map(), want) || unchanged.ResourceVersion != after.ResourceVersion {
		t.Fatalf("the refused write changed the binding: %+v, want %+v", unchanged, after)
	}
}

func TestMarkReleasedRefusesAnUnguardedWrite(t *testing.T) {
	testbed.Require(t)
	ns := newNamespace(t)
	createObject(t, ns, gardenertest.Binding("aws-0001", map[string]any{"hyperscalerType": "aws"}))
	c := newClient(t, ns, 0)
	if err := c.MarkReleased(context.Background(), "aws-0001", "", "1"); err == nil {
		t.Fatal("a release without resourceVersion succeeded")
	}
	if err := c.VoidRelease(context.Background(), "aws-0001", "", "1"); err == nil {
		t.Fatal("a void without resourceVersion succeeded")
	}
}

func TestGetBindingReadsLabelsAsKEBAndReportsMissingBindings(t *testing.T) {
	onBothServers(t, testGetBinding)
}

func testGetBinding(t *testing.T, server apiServer) {
	ctx := context.Background()
	ns := server.namespace(t)
	server.createBinding(t, ns, "aws-maybe-shared", map[string]any{"hyperscalerType": "aws", "shared": "maybe", "tenantName": "ga"})
	server.createBinding(t, ns, "aws-not-dirty", map[string]any{"hyperscalerType": "aws", "dirty": "false", "tenantName": "ga"})
	c, formats := server.recordingClient(t, ns, 0)
	defer formats.assertAnswered(t, server.wantMediaType(), "get")
	// KEB's selectors match shared=true exactly: "maybe" is a dedicated binding.
	if b, err := c.GetBinding(ctx, "aws-maybe-shared"); err != nil || b.Shared || !b.Dedicated() || b.OutOfPool != "" {
		t.Fatalf("shared=maybe: %+v, %v; want an ordinary dedicated binding", b, err)
	}
	// !dirty means no dirty label at all: "false" keeps it from every pool.
	if b, err := c.GetBinding(ctx, "aws-not-dirty"); err != nil || b.Dedicated() || !strings.Contains(b.OutOfPool, `dirty has value "false"`) {
		t.Fatalf("dirty=false: %+v, %v; want a binding in no pool, naming the label and value", b, err)
	}
	if _, err := c.GetBinding(ctx, "aws-missing"); err == nil {
		t.Fatal("GetBinding of a missing binding succeeded")
	}
}

func TestNewClientRejectsBadArguments(t *testing.T) {
	testbed.Require(t)
	cfg := kube.Config()
	cases := map[string]func() (*Client, error){
		"nil config":        func() (*Client, error) { return NewClient(nil, "ns", 0) },
		"empty namespace":   func() (*Client, error) { return NewClient(cfg, "", 0) },
		"negative page":     func() (*Client, error) { return NewClient(cfg, "ns", -1) },
		"zero timeout":      func() (*Client, error) { return NewClient(cfg, "ns", 0, WithRequestTimeout(0)) },
		"negative restarts": func() (*Client, error) { return NewClient(cfg, "ns", 0, withMaxRestarts(-1)) },
	}
	for name, newClient := range cases {
		if _, err := newClient(); err == nil {
			t.Errorf("%s: NewClient succeeded", name)
		}
	}
}
