package gardener

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/gardenertest"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// lister is what the client and the watcher both offer.
type lister interface {
	listShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) (ListStats, error)
	listBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) (ListStats, error)
}

// picture is everything one source lists.
type picture struct {
	Shoots   []hap.Shoot
	Bindings []hap.Binding
	Skipped  []hap.Skipped
}

func pictureOf(ctx context.Context, l lister) (picture, error) {
	var p picture
	if _, err := l.listShoots(ctx, func() { p.Shoots = nil }, func(s hap.Shoot) error {
		p.Shoots = append(p.Shoots, s)
		return nil
	}); err != nil {
		return p, err
	}
	_, err := l.listBindings(ctx, func() { p.Bindings, p.Skipped = nil, nil }, func(b hap.Binding) error {
		p.Bindings = append(p.Bindings, b)
		return nil
	}, func(s hap.Skipped) { p.Skipped = append(p.Skipped, s) })
	return p, err
}

// startWatcher starts a watcher on c until the test ends and waits for its
// first fill.
func startWatcher(t *testing.T, c *Client, opts ...WatchOption) (*Watcher, context.CancelFunc) {
	t.Helper()
	w, err := NewWatcher(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w.Start(ctx)
	syncCtx, done := context.WithTimeout(ctx, time.Minute)
	defer done()
	if err := w.WaitForSync(syncCtx); err != nil {
		t.Fatal(err)
	}
	return w, cancel
}

// sameAsClient reports whether the watcher lists exactly what a fresh list
// of the API returns, resourceVersions included.
func sameAsClient(ctx context.Context, c *Client, w *Watcher) (bool, string) {
	live, err := pictureOf(ctx, c)
	if err != nil {
		return false, "client: " + err.Error()
	}
	watched, err := pictureOf(ctx, w)
	if err != nil {
		return false, "watcher: " + err.Error()
	}
	return reflect.DeepEqual(live, watched), fmt.Sprintf("watched %+v, live %+v", watched, live)
}

func TestWatcherListsWhatTheAPIHoldsAfterCreatesDeletesAndLabelChanges(t *testing.T) {
	testbed.Require(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createObject(t, ns, gardenertest.Binding("aws-0001", map[string]any{"hyperscalerType": "aws", "tenantName": "ga-1"}))
	createObject(t, ns, gardenertest.Binding("aws-0002", map[string]any{"hyperscalerType": "aws"}))
	createObject(t, ns, gardenertest.Binding("aws-bad", map[string]any{"hyperscalerType": "aws", "dirty": "maybe"}))
	createObject(t, ns, gardenertest.Shoot("c-one", map[string]any{hap.LabelRuntimeID: "rt-1"}, map[string]any{"credentialsBindingName": "aws-0001"}))
	createObject(t, ns, gardenertest.Shoot("c-two", nil, map[string]any{"credentialsBindingName": "aws-0001"}))
	createObject(t, ns, gardenertest.Shoot("c-three", nil, map[string]any{"secretBindingName": "aws-0002"}))
	// Pages of two: the first fill is a paged list like any other.
	c := newClient(t, ns, 2)
	w, _ := startWatcher(t, c)
	if ok, saw := sameAsClient(ctx, c, w); !ok {
		t.Fatalf("after the first fill: %s", saw)
	}

	createObject(t, ns, gardenertest.Shoot("c-new", nil, map[string]any{"credentialsBindingName": "aws-0002"}))
	if err := dynamicClient(t).Resource(testbed.ShootsResource).Namespace(ns).Delete(ctx, "c-two", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	claimed, err := c.GetBinding(ctx, "aws-0002")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.replaceLabels(ctx, "aws-0002", claimed.ResourceVersion, map[string]string{"hyperscalerType": "aws", "tenantName": "ga-2"}); err != nil {
		t.Fatal(err)
	}
	spoiled, err := c.GetBinding(ctx, "aws-0001")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.replaceLabels(ctx, "aws-0001", spoiled.ResourceVersion, map[string]string{"hyperscalerType": "aws", "shared": "perhaps"}); err != nil {
		t.Fatal(err)
	}

	testbed.Eventually(t, 30*time.Second, "the watcher follows every change", func() (bool, string) {
		p, err := pictureOf(ctx, w)
		if err != nil {
			return false, err.Error()
		}
		var shoots []string
		for _, s := range p.Shoots {
			shoots = append(shoots, s.Name+"@"+s.BindingName)
		}
		byName := map[string]hap.Binding{}
		for _, b := range p.Bindings {
			byName[b.Name] = b
		}
		// Labels are read as KEB's selectors read them: shared "perhaps" is
		// an ordinary binding, now free; dirty "maybe" is in no pool.
		ok := reflect.DeepEqual(shoots, []string{"c-new@aws-0002", "c-one@aws-0001", "c-three@aws-0002"}) &&
			len(p.Bindings) == 3 && len(p.Skipped) == 0 &&
			byName["aws-0002"].GlobalAccountID == "ga-2" &&
			byName["aws-0001"].Free() && !byName["aws-0001"].Shared &&
			byName["aws-bad"].OutOfPool != ""
		return ok, fmt.Sprintf("shoots %v, bindings %+v, skipped %+v", shoots, p.Bindings, p.Skipped)
	})
	// Down to the resourceVersions a release guards its update with.
	if ok, saw := sameAsClient(ctx, c, w); !ok {
		t.Fatalf("after the changes: %s", saw)
	}
}

func TestWatcherListsFailBeforeTheFirstFillAndAfterStop(t *testing.T) {
	testbed.Require(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createObject(t, ns, gardenertest.Shoot("c-one", nil, map[string]any{"credentialsBindingName": "aws-0001"}))
	c := newClient(t, ns, 0)

	notStarted, err := NewWatcher(c, withSyncWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pictureOf(ctx, notStarted); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("list before the first fill: err = %v, want it to give up waiting", err)
	}

	w, stop := startWatcher(t, c, withSyncWait(50*time.Millisecond))
	if p, err := pictureOf(ctx, w); err != nil || len(p.Shoots) != 1 {
		t.Fatalf("after the first fill: %+v, %v", p, err)
	}
	stop()
	testbed.Eventually(t, 10*time.Second, "lists fail once the watch is stopped", func() (bool, string) {
		_, err := pictureOf(ctx, w)
		return errors.Is(err, ErrWatchStopped), fmt.Sprint(err)
	})
}

func TestNewWatcherRejectsBadArguments(t *testing.T) {
	testbed.Require(t)
	if _, err := NewWatcher(nil); err == nil {
		t.Error("NewWatcher(nil) succeeded")
	}
	if _, err := NewWatcher(newClient(t, "ns", 0), withSyncWait(0)); err == nil {
		t.Error("NewWatcher with a zero sync wait succeeded")
	}
}

// While an API server is down the watch is broken, so lists fail rather
// than answer from a cache nobody keeps current; once it is back the
// watcher lists again and follows changes. That holds for kube-apiserver,
// the front door, and for gardener-apiserver behind it, whose absence
// kube-apiserver answers with 503. The test has a test bed of its own, so
// the package's other tests never see the outages.
func TestWatcherFailsClosedWhileAnAPIServerIsDownAndRecovers(t *testing.T) {
	testbed.Require(t)
	ctx := context.Background()
	own := apiServer{name: "own", kube: testbed.KubeForTest(t)}
	ns := own.namespace(t)
	c := own.client(t, ns, 0)
	var mu sync.Mutex
	health := map[string]int{}
	w, _ := startWatcher(t, c, withSyncWait(200*time.Millisecond), WithHealthChanges(func(resource string, err error) {
		mu.Lock()
		defer mu.Unlock()
		health[fmt.Sprintf("%s in sync: %v", resource, err == nil)]++
	}))
	if _, err := pictureOf(ctx, w); err != nil {
		t.Fatal(err)
	}

	for i, down := range []testbed.APIServer{testbed.KubeAPIServer, testbed.GardenerAPIServer} {
		if err := own.kube.StopServer(down); err != nil {
			t.Fatal(err)
		}
		testbed.Eventually(t, 30*time.Second, fmt.Sprintf("lists fail while %s is down", down), func() (bool, string) {
			_, err := pictureOf(ctx, w)
			return err != nil, "a list succeeded"
		})
		if err := own.kube.StartServer(ctx, down); err != nil {
			t.Fatal(err)
		}
		after := fmt.Sprintf("aws-after-%d", i)
		own.createBinding(t, ns, after, map[string]any{"hyperscalerType": "aws"})
		// The reflector backs off up to 30 s between attempts to reconnect.
		testbed.Eventually(t, 90*time.Second, fmt.Sprintf("the watcher recovers from %s's outage and sees the binding created after it", down), func() (bool, string) {
			p, err := pictureOf(ctx, w)
			if err != nil {
				return false, err.Error()
			}
			return len(p.Bindings) == i+1 && p.Bindings[i].Name == after, fmt.Sprintf("%+v", p.Bindings)
		})
		mu.Lock()
		for _, want := range []string{"credentialsbindings in sync: false", "credentialsbindings in sync: true"} {
			if health[want] < i+1 {
				t.Errorf("after %s's outage: health changes %v lack %q", down, health, want)
			}
		}
		mu.Unlock()
	}
}
