package gardener

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// shootCollector gathers what a list hands over, forgetting it on reset as
// callers must.
type shootCollector struct {
	shoots    []hap.Shoot
	delivered int // over all attempts, to see that a restart really happened
	resets    int
}

func (c *shootCollector) reset() { c.shoots = nil; c.resets++ }
func (c *shootCollector) add(s hap.Shoot) error {
	c.shoots = append(c.shoots, s)
	c.delivered++
	return nil
}

func (c *shootCollector) sorted() []hap.Shoot {
	sort.Slice(c.shoots, func(i, j int) bool { return c.shoots[i].Name < c.shoots[j].Name })
	return c.shoots
}

func TestListShootsAcrossPagesReturnsEachShootOnceAsGenerated(t *testing.T) {
	onBothServers(t, testListShootsAcrossPages)
}

func testListShootsAcrossPages(t *testing.T, server apiServer) {
	l, ns := server.load(t, landscape.Options{Seed: 1, GlobalAccounts: 6})
	want := l.ExpectedShoots()
	const pageSize = 7
	if len(want) <= 3*pageSize {
		t.Fatalf("landscape has %d shoots, too few for more than three pages", len(want))
	}
	var got shootCollector
	c, formats := server.recordingClient(t, ns, pageSize)
	stats, err := c.listShoots(context.Background(), got.reset, got.add)
	if err != nil {
		t.Fatal(err)
	}
	formats.assertAnswered(t, server.wantMediaType(), "list")
	if !reflect.DeepEqual(got.sorted(), want) {
		t.Fatalf("listed shoots differ from the landscape:\n got %+v\nwant %+v", got.shoots, want)
	}
	wantPages := (len(want) + pageSize - 1) / pageSize
	if stats.Pages != wantPages || stats.Objects != len(want) || stats.Restarts != 0 {
		t.Fatalf("stats = %+v, want %d pages, %d objects, no restart", stats, wantPages, len(want))
	}
}

func TestListBindingsAcrossPagesReturnsEachBindingOnceAsGenerated(t *testing.T) {
	onBothServers(t, testListBindingsAcrossPages)
}

func testListBindingsAcrossPages(t *testing.T, server apiServer) {
	l, ns := server.load(t, landscape.Options{Seed: 2, GlobalAccounts: 4})
	want := l.ExpectedBindings()
	for i := range want {
		labels := want[i].Labels.Map()
		maps.Copy(labels, server.admissionLabels(want[i].ProviderType))
		want[i].Labels = hap.LabelsOf(labels)
	}
	var got []hap.Binding
	var skipped []hap.Skipped
	c, formats := server.recordingClient(t, ns, 4)
	stats, err := c.listBindings(context.Background(),
		func() { got, skipped = nil, nil },
		func(b hap.Binding) error { got = append(got, b); return nil },
		func(s hap.Skipped) { skipped = append(skipped, s) })
	if err != nil {
		t.Fatal(err)
	}
	formats.assertAnswered(t, server.wantMediaType(), "list")
	if len(skipped) != 0 {
		t.Fatalf("skipped %+v from a landscape with valid labels", skipped)
	}
	if stats.Pages <= 3 {
		t.Fatalf("listed %d bindings in %d pages, want more than three", len(got), stats.Pages)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
	for i := range got {
		if got[i].ResourceVersion == "" {
			t.Fatalf("binding %s has no resourceVersion", got[i].Name)
		}
		got[i].ResourceVersion = ""
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("listed bindings differ from the landscape:\n got %+v\nwant %+v", got, want)
	}
}

// expireTokenAfterPage makes the continue token the list holds stale: a
// write moves etcd past the list's revision, and compaction drops that
// revision.
func expireTokenAfterPage(t *testing.T, server apiServer, namespace string, onPages func(page int) bool) Option {
	core, err := kubernetes.NewForConfig(server.kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	return withBetweenPages(func(ctx context.Context, _ string, page int) error {
		if !onPages(page) {
			return nil
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "revision-bump-"}}
		if _, err := core.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
		return server.kube.CompactEtcd(ctx)
	})
}

func TestListShootsRestartsOnceAfterExpiredContinueTokenAndReturnsEachShootOnce(t *testing.T) {
	onBothServers(t, testListShootsRestartsAfterExpiredToken)
}

func testListShootsRestartsAfterExpiredToken(t *testing.T, server apiServer) {
	l, ns := server.load(t, landscape.Options{Seed: 3, GlobalAccounts: 3})
	want := l.ExpectedShoots()
	expired := false
	expireOnce := expireTokenAfterPage(t, server, ns, func(page int) bool {
		if page == 2 && !expired {
			expired = true
			return true
		}
		return false
	})
	var got shootCollector
	c, formats := server.recordingClient(t, ns, 3, expireOnce)
	stats, err := c.listShoots(context.Background(), got.reset, got.add)
	if err != nil {
		t.Fatal(err)
	}
	formats.assertAnswered(t, server.wantMediaType(), "list")
	if stats.Restarts != 1 || got.resets != 1 {
		t.Fatalf("restarts = %d, resets = %d, want one of each", stats.Restarts, got.resets)
	}
	if got.delivered <= len(want) {
		t.Fatalf("delivered %d shoots over all attempts for %d shoots: the first attempt was not interrupted", got.delivered, len(want))
	}
	if !reflect.DeepEqual(got.sorted(), want) {
		t.Fatalf("after the restart the shoots differ from the landscape:\n got %+v\nwant %+v", got.shoots, want)
	}
	if stats.Objects != len(want) {
		t.Fatalf("stats.Objects = %d, want %d", stats.Objects, len(want))
	}
}

func TestListShootsGivesUpWhenTheContinueTokenKeepsExpiring(t *testing.T) {
	testbed.Require(t)
	_, ns := loadLandscape(t, landscape.Options{Seed: 4, GlobalAccounts: 2})
	always := expireTokenAfterPage(t, crdServer(), ns, func(int) bool { return true })
	var got shootCollector
	stats, err := newClient(t, ns, 2, always, withMaxRestarts(2)).listShoots(context.Background(), got.reset, got.add)
	if !errors.Is(err, errTooManyRestarts) {
		t.Fatalf("err = %v, want errTooManyRestarts", err)
	}
	if stats.Restarts != 2 || got.resets != 2 {
		t.Fatalf("restarts = %d, resets = %d, want 2 of each", stats.Restarts, got.resets)
	}
}

func TestListFailsClosedWhenTheAPIIsUnreachable(t *testing.T) {
	testbed.Require(t)
	cfg := rest.CopyConfig(kube.Config())
	cfg.Host = "https://127.0.0.1:1"
	c, err := NewClient(cfg, "garden-kyma", 10)
	if err != nil {
		t.Fatal(err)
	}
	called := false
	_, err = c.listShoots(context.Background(), func() {}, func(hap.Shoot) error { called = true; return nil })
	if err == nil || called {
		t.Fatalf("err = %v, fn called = %v; want an error and no shoot", err, called)
	}
}

func TestListStopsAtTheCallersError(t *testing.T) {
	testbed.Require(t)
	_, ns := loadLandscape(t, landscape.Options{Seed: 5, GlobalAccounts: 2})
	stop := errors.New("caller stops")
	calls := 0
	_, err := newClient(t, ns, 0).listShoots(context.Background(), func() {}, func(hap.Shoot) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("err = %v after %d calls, want the caller's error after one", err, calls)
	}
}
