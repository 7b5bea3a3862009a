package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// A release that was wrong (the binding still held clusters) is undone
// before subscription-cleanup-job wipes the account: undo-release removes
// the dirty label, the binding keeps its tenantName, and KEB's own selector
// for the GA's dedicated pool lists it again; the undo is in the release
// history. What no longer shows the job's release is refused, the binding
// unchanged.
func TestUndoReleaseGivesTheBindingBackToItsGlobalAccount(t *testing.T) {
	l := landscape.New(23)
	l.AddBinding(landscape.BindingSpec{Name: "aws-wrong", Pool: aws, GlobalAccountID: "ga-held"})
	l.AddBinding(landscape.BindingSpec{Name: "aws-wiped", Pool: aws, GlobalAccountID: "ga-gone"})
	s := load(t, l, "release:\n  gracePeriod: 0s\n")
	ctx := testContext(t)
	cli := func(args ...string) (int, string) {
		t.Helper()
		code, stdout, stderr := runBinary(t, nil, append(args, s.Flags()...)...)
		return code, stdout + stderr
	}
	if code, out := cli("run", "--jobs", "release"); code != 0 {
		t.Fatalf("run --jobs release: exit %d\n%s", code, out)
	}
	bindings := bindingsClient(t, s.World.Namespace)
	wrong := getBinding(t, ctx, bindings, "aws-wrong")
	if wrong.GetLabels()[hap.LabelDirty] != "true" {
		t.Fatalf("the release job did not release aws-wrong: %v", wrong.GetLabels())
	}
	release := wrong.GetAnnotations()[hap.AnnotationRelease]
	// The clusters the release missed.
	s.AddShoot(t, ctx, landscape.ShootSpec{BindingName: "aws-wrong", GlobalAccountID: "ga-held", Pool: aws})

	if code, out := cli("undo-release", "--binding", "aws-wrong", "--reason", "INC-1: released with a cluster", "--dry-run"); code != 0 ||
		getBinding(t, ctx, bindings, "aws-wrong").GetLabels()[hap.LabelDirty] != "true" {
		t.Fatalf("undo-release --dry-run: exit %d, or it changed the binding\n%s", code, out)
	}
	if code, out := cli("undo-release", "--binding", "aws-wrong", "--reason", "INC-1: released with a cluster"); code != 0 {
		t.Fatalf("undo-release: exit %d\n%s", code, out)
	}
	undone := getBinding(t, ctx, bindings, "aws-wrong")
	if labels := undone.GetLabels(); labels[hap.LabelDirty] != "" || labels[hap.LabelTenantName] != "ga-held" ||
		undone.GetAnnotations()[hap.AnnotationReleaseUndone] != release {
		t.Errorf("after undo-release: labels %v, annotations %v", labels, undone.GetAnnotations())
	}
	// KEB's selector for the GA's dedicated aws pool
	// (internal/subscriptions/label_selector.go: BuildForTenantMatching).
	keb := "hyperscalerType=aws,!euAccess,shared!=true,!dirty,tenantName=ga-held"
	list, err := bindings.List(ctx, metav1.ListOptions{LabelSelector: keb})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Items, func(b unstructured.Unstructured) bool { return b.GetName() == "aws-wrong" }) {
		t.Errorf("KEB's selector %q does not list aws-wrong after the undo", keb)
	}
	history, err := s.Store(t, ctx).ReleaseHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := history[len(history)-1]
	if last.BindingName != "aws-wrong" || last.Outcome != hap.OutcomeUndone || last.GlobalAccountID != "ga-held" ||
		last.Reason != "undoes release "+release+": INC-1: released with a cluster" {
		t.Errorf("the release history ends with %+v, want the undo of release %s", last, release)
	}

	// Refused, nothing changed: the same undo again; a binding the cleanup
	// wiped and returned; a release the history does not hold.
	if code, out := cli("undo-release", "--binding", "aws-wrong", "--reason", "again"); code != exitFailed || !strings.Contains(out, "has no dirty label") {
		t.Errorf("a second undo: exit %d\n%s", code, out)
	}
	wiped := getBinding(t, ctx, bindings, "aws-wiped")
	if wiped.GetLabels()[hap.LabelDirty] != "true" {
		t.Fatalf("the release job did not release aws-wiped: %v", wiped.GetLabels())
	}
	cleanup := `{"metadata":{"labels":{"dirty":null,"tenantName":null}}}` // as subscription-cleanup-job leaves it
	if _, err := bindings.Patch(ctx, "aws-wiped", types.MergePatchType, []byte(cleanup), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, out := cli("undo-release", "--binding", "aws-wiped", "--reason", "too late"); code != exitFailed ||
		!strings.Contains(out, "subscription-cleanup-job has wiped the account") {
		t.Errorf("undoing the release of a binding the cleanup returned: exit %d\n%s", code, out)
	}
	if labels := getBinding(t, ctx, bindings, "aws-wiped").GetLabels(); labels[hap.LabelTenantName] != "" {
		t.Errorf("a refused undo changed aws-wiped: %v", labels)
	}
	id, _ := strconv.Atoi(release)
	if code, out := cli("undo-release", "--binding", "aws-wiped", "--release", strconv.Itoa(id), "--reason", "wrong id"); code != exitUsage ||
		!strings.Contains(out, "records no such release of binding aws-wiped") {
		t.Errorf("undoing a release of another binding: exit %d\n%s", code, out)
	}
}

func bindingsClient(t *testing.T, namespace string) dynamic.ResourceInterface {
	t.Helper()
	client, err := dynamic.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	return client.Resource(testbed.CredentialsBindingsResource).Namespace(namespace)
}

func getBinding(t *testing.T, ctx context.Context, bindings dynamic.ResourceInterface, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := bindings.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
