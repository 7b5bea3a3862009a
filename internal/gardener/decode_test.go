package gardener

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/gardenertest"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestListShootsDecodesBindingNameDeletionAndRuntimeID(t *testing.T) {
	testbed.Require(t)
	ns := newNamespace(t)
	runtimeLabel := map[string]any{hap.LabelRuntimeID: "rt-1", "shoot.gardener.cloud/status": "healthy"}
	createObject(t, ns, gardenertest.Shoot("c-current", runtimeLabel, map[string]any{"credentialsBindingName": "aws-0001"}))
	createObject(t, ns, gardenertest.Shoot("c-legacy", nil, map[string]any{"secretBindingName": "aws-0002"}))
	createObject(t, ns, gardenertest.Shoot("c-both", nil, map[string]any{"credentialsBindingName": "aws-0003", "secretBindingName": "aws-old"}))
	createObject(t, ns, gardenertest.Shoot("c-none", nil, map[string]any{}))
	deleting := gardenertest.Shoot("c-deleting", nil, map[string]any{"credentialsBindingName": "aws-0001"})
	deleting["metadata"].(map[string]any)["finalizers"] = []any{"gardener"}
	createObject(t, ns, deleting)
	if err := dynamicClient(t).Resource(testbed.ShootsResource).Namespace(ns).Delete(context.Background(), "c-deleting", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	var got []hap.Shoot
	if _, err := newClient(t, ns, 2).listShoots(context.Background(), func() { got = nil }, func(s hap.Shoot) error {
		got = append(got, s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
	want := []hap.Shoot{
		{Name: "c-both", BindingName: "aws-0003"},
		{Name: "c-current", BindingName: "aws-0001", RuntimeID: "rt-1"},
		{Name: "c-deleting", BindingName: "aws-0001", Deleting: true},
		{Name: "c-legacy", BindingName: "aws-0002", ViaSecretBinding: true},
		{Name: "c-none"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded shoots:\n got %+v\nwant %+v", got, want)
	}
}

func TestListBindingsReadsLabelsAsKEBsSelectorsAndSaysWhyOneIsInNoPool(t *testing.T) {
	testbed.Require(t)
	ns := newNamespace(t)
	createObject(t, ns, gardenertest.Binding("aws-good", map[string]any{"hyperscalerType": "aws", "euAccess": "true", "tenantName": "ga-1", "internal": "true"}))
	createObject(t, ns, gardenertest.Binding("aws-no-type", map[string]any{"tenantName": "ga-1"}))
	createObject(t, ns, gardenertest.Binding("aws-bad-flag", map[string]any{"hyperscalerType": "aws", "dirty": "yes"}))

	var got []hap.Binding
	var skipped []hap.Skipped
	if _, err := newClient(t, ns, 0).listBindings(context.Background(),
		func() { got, skipped = nil, nil },
		func(b hap.Binding) error { got = append(got, b); return nil },
		func(s hap.Skipped) { skipped = append(skipped, s) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(skipped) != 0 {
		t.Fatalf("got bindings %+v, skipped %+v: want all three delivered, none skipped", got, skipped)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
	g := got[1]
	if g.Name != "aws-good" || g.GlobalAccountID != "ga-1" || g.Pool != (hap.Pool{HyperscalerType: "aws", EUAccess: true}) ||
		!g.Internal || g.Shared || g.Dirty || g.ProviderType != "aws" || g.ResourceVersion == "" || g.OutOfPool != "" {
		t.Fatalf("decoded binding %+v", g)
	}
	wantReasons := map[string]string{"aws-bad-flag": `dirty has value "yes"`, "aws-no-type": "hyperscalerType"}
	for _, b := range []hap.Binding{got[0], got[2]} {
		if !strings.Contains(b.OutOfPool, wantReasons[b.Name]) || b.Dedicated() || b.InSharedPool() {
			t.Errorf("%s: OutOfPool %q, want a binding in no pool naming %q", b.Name, b.OutOfPool, wantReasons[b.Name])
		}
	}
}
