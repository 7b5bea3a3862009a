package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// serve brings the candidate table up to date after a burst of changes in
// Gardener, without a scheduled candidates run (they are an hour apart
// here): the table then equals what a full run decides.
func TestServeFollowsABurstOfChangesWithTheTableAFullRunWrites(t *testing.T) {
	l := smallLandscape()
	s := load(t, l, plantedConfig+schedules("@every 1h", "@every 1h", "@every 1h", "@every 1h"))
	s.serveDryRun(t, dryRunFlags{release: true})
	// A full run's decision on the landscape as it is now, gathered apart
	// from serve's caches.
	full := func() []hap.Candidate {
		apart := s.open(t, &testbed.SyncBuffer{})
		f, err := apart.Runner.Gather(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		return normalize(f.Candidates())
	}
	// The first fill of the watch is a change too: the table appears.
	want := full()
	waitFor(t, "the table after the first fill", func() bool { return reflect.DeepEqual(s.candidateRows(t), want) })

	// A burst: a GA claims a free binding, a shoot goes away, a binding's
	// labels put it in no pool, KEB's free step marks the empty one dirty.
	client, err := dynamic.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	bindings := client.Resource(testbed.CredentialsBindingsResource).Namespace(s.World.Namespace)
	label := func(name, key, value string) {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: value}}})
		if _, err := bindings.Patch(testContext(t), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	label("ali-free-1", hap.LabelTenantName, "ga-ali")
	label("ali-b", hap.LabelDirty, "false")
	label("ali-c", hap.LabelDirty, "true")
	shoots := client.Resource(testbed.ShootsResource).Namespace(s.World.Namespace)
	if err := shoots.Delete(testContext(t), shootOf(t, shoots, "ali-a"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	want = full()
	if reflect.DeepEqual(want, s.candidateRows(t)) {
		t.Fatal("the burst changed nothing a full run decides: the test proves nothing")
	}
	waitFor(t, "the table after the burst", func() bool { return reflect.DeepEqual(s.candidateRows(t), want) })
	if slices.ContainsFunc(want, func(c hap.Candidate) bool { return c.BindingName == "ali-c" }) {
		t.Error("the binding marked dirty is still a candidate")
	}
}

// shootOf names one shoot of binding.
func shootOf(t *testing.T, shoots dynamic.ResourceInterface, binding string) string {
	t.Helper()
	list, err := shoots.List(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		if name, _, _ := unstructured.NestedString(s.Object, "spec", "credentialsBindingName"); name == binding {
			return s.GetName()
		}
	}
	t.Fatalf("no shoot of %s", binding)
	return ""
}
