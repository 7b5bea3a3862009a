package gardener

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/gardenertest"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// quickRetry keeps fault tests fast: four attempts within a few
// milliseconds.
var quickRetry = wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 4}

// faultProxy stands between the client and the real API server and answers
// chosen requests itself with an error status, counting every request.
type faultProxy struct {
	mu       sync.Mutex
	requests map[string]int // by kind of request, see requestKind
	// fault returns the status to answer with instead of the API server, 0
	// to pass the request on; n counts requests of that kind so far,
	// this one included.
	fault func(kind string, n int) int
}

// requestKind tells first pages, later pages and single GETs apart.
func requestKind(r *http.Request) string {
	switch {
	case r.URL.Query().Get("continue") != "":
		return "next-page"
	case strings.Contains(r.URL.Path, "/credentialsbindings/"):
		return "get"
	}
	return "first-page"
}

func (p *faultProxy) count(kind string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests[kind]
}

// newFaultProxy returns a client config that goes through the proxy.
func newFaultProxy(t *testing.T, fault func(kind string, n int) int) (*faultProxy, *rest.Config) {
	t.Helper()
	target := kube.Config()
	transport, err := rest.TransportFor(target)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(target.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{requests: map[string]int{}, fault: fault}
	forward := httputil.NewSingleHostReverseProxy(u)
	forward.Transport = transport
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := requestKind(r)
		p.mu.Lock()
		p.requests[kind]++
		n := p.requests[kind]
		p.mu.Unlock()
		code := p.fault(kind, n)
		if code == cutBody {
			testbed.CutResponse(w, r, forward)
			return
		}
		if code != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected","code":` + strconv.Itoa(code) + `}`))
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return p, &rest.Config{Host: srv.URL}
}

// cutBody, as a fault, passes the request on but breaks the connection
// halfway through the answer's body, as a restarting API server or a load
// balancer dropping the connection would.
const cutBody = -1

func listAllShoots(t *testing.T, c *Client) ([]hap.Shoot, ListStats, error) {
	t.Helper()
	var got shootCollector
	stats, err := c.listShoots(context.Background(), got.reset, got.add)
	return got.sorted(), stats, err
}

// A page the server fails with 503 or 429, or whose body breaks off halfway,
// is asked for again, and the list still hands over every shoot exactly once.
func TestListRetriesAPageAfterTransientErrors(t *testing.T) {
	testbed.Require(t)
	l, ns := loadLandscape(t, landscape.Options{Seed: 11, GlobalAccounts: 2})
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusInternalServerError, cutBody} {
		name := http.StatusText(code)
		if code == cutBody {
			name = "body cut off"
		}
		t.Run(name, func(t *testing.T) {
			proxy, cfg := newFaultProxy(t, func(kind string, n int) int {
				if kind == "next-page" && n <= 2 {
					return code // the second page fails twice, then passes
				}
				return 0
			})
			c, err := NewClient(cfg, ns, 3, withRetry(quickRetry))
			if err != nil {
				t.Fatal(err)
			}
			got, stats, err := listAllShoots(t, c)
			if err != nil {
				t.Fatalf("list with two transient failures: %v", err)
			}
			if want := l.ExpectedShoots(); !reflect.DeepEqual(got, want) {
				t.Fatalf("shoots after retries differ from the landscape:\n got %d\nwant %d", len(got), len(want))
			}
			wantPages := (len(got) + 2) / 3
			if n := proxy.count("next-page"); n != wantPages-1+2 {
				t.Fatalf("%d later-page requests for %d pages: want exactly the two failed ones repeated", n, wantPages)
			}
			if stats.Restarts != 0 {
				t.Fatalf("a transient error restarted the list: %+v", stats)
			}
		})
	}
}

// Errors a repeat cannot fix are not repeated, and the list fails closed.
func TestListDoesNotRetryPermanentErrors(t *testing.T) {
	testbed.Require(t)
	_, ns := loadLandscape(t, landscape.Options{Seed: 12, GlobalAccounts: 1})
	for _, code := range []int{http.StatusForbidden, http.StatusNotFound, http.StatusUnauthorized, http.StatusBadRequest} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			proxy, cfg := newFaultProxy(t, func(kind string, _ int) int {
				if kind == "next-page" {
					return code
				}
				return 0
			})
			c, err := NewClient(cfg, ns, 3, withRetry(quickRetry))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = listAllShoots(t, c)
			var status apierrors.APIStatus
			if !errors.As(err, &status) || int(status.Status().Code) != code {
				t.Fatalf("err = %v, want the %d", err, code)
			}
			if n := proxy.count("next-page"); n != 1 {
				t.Fatalf("a %d was asked %d times, want once", code, n)
			}
		})
	}
}

// A server that keeps failing is given up on after the configured attempts.
func TestListGivesUpAfterTheLastRetry(t *testing.T) {
	testbed.Require(t)
	_, ns := loadLandscape(t, landscape.Options{Seed: 13, GlobalAccounts: 1})
	proxy, cfg := newFaultProxy(t, func(string, int) int { return http.StatusServiceUnavailable })
	c, err := NewClient(cfg, ns, 3, withRetry(quickRetry))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = listAllShoots(t, c)
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "gave up after 4 attempt(s)") {
		t.Fatalf("err = %v, want the 503 and the attempts", err)
	}
	if n := proxy.count("first-page"); n != quickRetry.Steps {
		t.Fatalf("%d attempts, want %d", n, quickRetry.Steps)
	}
}

// GetBinding, the re-read before a release, retries the same way, and a
// binding that is gone is reported at once.
func TestGetBindingRetriesTransientErrorsOnly(t *testing.T) {
	testbed.Require(t)
	ns := newNamespace(t)
	createObject(t, ns, gardenertest.Binding("b-1", map[string]any{"hyperscalerType": "aws", "tenantName": "ga-1"}))
	proxy, cfg := newFaultProxy(t, func(kind string, n int) int {
		if kind == "get" && n == 1 {
			return http.StatusTooManyRequests
		}
		return 0
	})
	c, err := NewClient(cfg, ns, 0, withRetry(quickRetry))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.GetBinding(context.Background(), "b-1")
	if err != nil || b.GlobalAccountID != "ga-1" || proxy.count("get") != 2 {
		t.Fatalf("GetBinding after one 429: %+v, %v, %d requests", b, err, proxy.count("get"))
	}
	_, err = c.GetBinding(context.Background(), "missing")
	if !apierrors.IsNotFound(err) || proxy.count("get") != 3 {
		t.Fatalf("GetBinding of a missing binding: %v after %d requests, want one 404", err, proxy.count("get"))
	}
}

// An API server really stops between two pages: the list fails rather
// than hand over half the shoots as if they were all, and the same client
// lists everything once the server is back. A second time the server comes
// back while the list is still retrying the page: the list then completes,
// each shoot exactly once. Both servers a read passes: kube-apiserver, and
// gardener-apiserver behind it, whose absence kube-apiserver answers with
// 503. The test has a test bed of its own, so the package's other tests
// never see the outages.
func TestListSurvivesOrFailsClosedWhenAnAPIServerStopsMidList(t *testing.T) {
	testbed.Require(t)
	own := apiServer{name: "own", kube: testbed.KubeForTest(t)}
	l, ns := own.load(t, landscape.Options{Seed: 14, GlobalAccounts: 6})
	want := l.ExpectedShoots()
	for _, down := range []testbed.APIServer{testbed.KubeAPIServer, testbed.GardenerAPIServer} {
		t.Run(string(down), func(t *testing.T) { testListWhenAServerStopsMidList(t, own.kube, down, ns, want) })
	}
}

func testListWhenAServerStopsMidList(t *testing.T, kube *testbed.Kube, down testbed.APIServer, ns string, want []hap.Shoot) {
	stopOnce := func(restart bool) Option {
		var once sync.Once
		return withBetweenPages(func(ctx context.Context, _ string, page int) error {
			if page != 2 {
				return nil
			}
			var err error
			once.Do(func() {
				if err = kube.StopServer(down); err != nil || !restart {
					return
				}
				// Comes back while the list retries the next page.
				go func() {
					if err := kube.StartServer(context.Background(), down); err != nil {
						t.Errorf("restart %s: %v", down, err)
					}
				}()
			})
			return err
		})
	}

	brief := wait.Backoff{Duration: 5 * time.Millisecond, Factor: 2, Steps: 3}
	c, err := NewClient(kube.Config(), ns, 2, withRetry(brief), stopOnce(false))
	if err != nil {
		t.Fatal(err)
	}
	got, stats, err := listAllShoots(t, c)
	if err == nil {
		t.Fatalf("the list succeeded with %s down after page 2 (%d of %d shoots)", down, len(got), len(want))
	}
	if stats.Objects != 4 || len(want) <= 6 {
		t.Fatalf("stats %+v: the failure did not come in the middle of the list", stats)
	}
	if err := kube.StartServer(context.Background(), down); err != nil {
		t.Fatal(err)
	}
	if got, _, err := listAllShoots(t, c); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after %s came back: %d shoots, %v; want %d", down, len(got), err, len(want))
	}

	// Up to two minutes, a try every half second: gardener-apiserver takes
	// 5 to 6 s to start on a quiet machine, far longer on a busy one. (A
	// Backoff with a Cap stops at the first step that reaches it, after
	// about 5 s here: too short for a restart.)
	patient := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1, Steps: 240}
	c, err = NewClient(kube.Config(), ns, 3, withRetry(patient), stopOnce(true))
	if err != nil {
		t.Fatal(err)
	}
	got, stats, err = listAllShoots(t, c)
	if err != nil {
		t.Fatalf("the list did not ride out a restart of %s: %v", down, err)
	}
	if !reflect.DeepEqual(got, want) || stats.Objects != len(want) {
		t.Fatalf("after riding out the restart of %s: %d shoots, want %d", down, len(got), len(want))
	}
}
