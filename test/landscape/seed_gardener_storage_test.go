package landscape

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// A landscape seeded into gardener-apiserver's storage is served by the real
// server as the landscape says: every binding and shoot, a shoot being
// deleted with its deletionTimestamp, a shoot on a binding the landscape
// lacks, each shoot defaulted by the server on read, the SecretBinding of a
// shoot naming its binding the legacy way; and the namespace still admits a
// legacy shoot created through the API afterwards, which admission checks
// against that stored SecretBinding.
func TestASeededLandscapeIsServedByTheRealGardenerAPIServer(t *testing.T) {
	testbed.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kube := testbed.KubeForTest(t)
	ns, err := kube.NewNamespace(ctx, "garden-seeded")
	if err != nil {
		t.Fatal(err)
	}
	l := Generate(Options{Seed: 17, GlobalAccounts: 3})
	l.AddShoot(ShootSpec{BindingName: "seeded-ghost", RuntimeID: "rt-ghost", GlobalAccountID: "ga-ghost"})
	legacyBinding := l.Bindings[0]
	l.AddShoot(ShootSpec{BindingName: legacyBinding.Name, Legacy: true, RuntimeID: "rt-legacy", GlobalAccountID: "ga-legacy"})
	legacy, err := l.legacySecretBindings(ns)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(l.Shoots, func(s *Shoot) bool { return s.Deleting }) {
		t.Fatal("the landscape has no shoot being deleted")
	}
	var reported int
	if err := SeedGardenerAPIServer(ctx, kube, ns, l, func(done, total int) { reported = done }); err != nil {
		t.Fatal(err)
	}
	if want := len(legacy) + len(l.Bindings) + len(l.Shoots); reported != want {
		t.Errorf("progress reported %d objects of %d", reported, want)
	}

	c, err := gardener.NewClient(kube.Config(), ns, 7)
	if err != nil {
		t.Fatal(err)
	}
	var shoots []hap.Shoot
	if err := c.ListShoots(ctx, func() { shoots = nil }, func(s hap.Shoot) error { shoots = append(shoots, s); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := l.ExpectedShoots(); !reflect.DeepEqual(byName(shoots, shootName), byName(want, shootName)) {
		t.Errorf("served shoots differ from the landscape's: %d served, %d expected", len(shoots), len(want))
	}
	var bindings []hap.Binding
	if err := c.ListBindings(ctx, func() { bindings = nil }, func(b hap.Binding) error { bindings = append(bindings, b); return nil }, func(hap.Skipped) {}); err != nil {
		t.Fatal(err)
	}
	for i := range bindings {
		bindings[i].ResourceVersion = "" // the server's; the landscape has none
	}
	if want := l.ExpectedBindings(); !reflect.DeepEqual(byName(bindings, bindingName), byName(want, bindingName)) {
		t.Errorf("served bindings differ from the landscape's:\n got %+v\nwant %+v", byName(bindings, bindingName), byName(want, bindingName))
	}

	d, err := dynamic.NewForConfig(kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	one, err := d.Resource(testbed.ShootsResource).Namespace(ns).Get(ctx, l.Shoots[0].Object.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if name, _, _ := unstructured.NestedString(one.Object, "spec", "schedulerName"); name == "" {
		t.Error("a seeded shoot is served without the fields gardener-apiserver defaults on read (spec.schedulerName)")
	}

	stored, err := d.Resource(secretBindingsResource).Namespace(ns).Get(ctx, legacyBinding.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the SecretBinding a seeded legacy shoot names: %v", err)
	}
	if provider, _, _ := unstructured.NestedString(stored.Object, "provider", "type"); provider != legacyBinding.Provider.Type {
		t.Errorf("stored SecretBinding %s has provider type %q, want its binding's %q", legacyBinding.Name, provider, legacyBinding.Provider.Type)
	}

	added := l.AddShoot(ShootSpec{BindingName: legacyBinding.Name, Legacy: true, RuntimeID: "rt-after", GlobalAccountID: "ga-after"})
	if err := CreateShoot(ctx, kube, ns, added); err != nil {
		t.Fatalf("a legacy shoot created through admission after seeding: %v", err)
	}
}

var secretBindingsResource = schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "secretbindings"}

func shootName(s hap.Shoot) string     { return s.Name }
func bindingName(b hap.Binding) string { return b.Name }

// byName is s sorted by name, without changing s.
func byName[T any](s []T, name func(T) string) []T {
	out := slices.Clone(s)
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(name(a), name(b)) })
	return out
}
