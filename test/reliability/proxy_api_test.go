package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// apiProxy stands between every job of a trial and the API server, in plain
// HTTP, so it sees each request. It does three things:
//
//   - It witnesses every release. The job's release (its PATCH of a
//     credentials binding) is passed on while the world's mutex is held, so
//     no write of the actor's can add or remove a reference meanwhile; the
//     references counted right before are those at the moment of the
//     release. The mutex is held until the proxy knows whether the update
//     landed, whatever the job hears, so a late landing cannot slip past.
//   - It cuts connections on request (armed by the fault injector): the
//     next answer broken off halfway, or the next request closed unsent.
//   - It aims faults at the moment between a release's intent row and its
//     update: the reply dropped after the update landed, the request
//     dropped unsent, PostgreSQL restarted or the job killed before the
//     reply.
type apiProxy struct {
	t   *testing.T
	w   *world
	srv *httptest.Server
	// pod is the binary job, for the aimed kill.
	pod *binaryPod

	mu    sync.Mutex
	armed string // a connection fault for the next request, "" for none
	aimed string // a fault for the next release, "" for none
	// aimedLeft counts aimed faults taken and not yet done: disarm waits
	// for them, so a PostgreSQL restart the proxy began has ended before
	// the trial checks the world.
	aimedLeft  sync.WaitGroup
	fired      map[string]int
	landed     map[string][]string // binding -> release IDs that landed
	violations []string
}

// Connection faults the injector arms, and faults it aims at a release.
const (
	cutReply   = "api: reply cut halfway"
	cutRequest = "api: request cut unsent"

	aimedReplyDropped   = "aimed: update landed, reply dropped"
	aimedRequestDropped = "aimed: update dropped unsent"
	aimedPostgres       = "aimed: postgres restarted before the reply"
	aimedJobKill        = "aimed: job killed before the reply"
)

var aimedFaults = []string{aimedReplyDropped, aimedRequestDropped, aimedPostgres, aimedJobKill}

func newAPIProxy(t *testing.T, w *world, pod *binaryPod) *apiProxy {
	t.Helper()
	p := &apiProxy{t: t, w: w, pod: pod, fired: map[string]int{}, landed: map[string][]string{}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// config is what a job in this process is given to reach the API server.
func (p *apiProxy) config() *rest.Config { return &rest.Config{Host: p.srv.URL} }

func (p *apiProxy) arm(fault string) { p.set(&p.armed, fault) }
func (p *apiProxy) aim(fault string) { p.set(&p.aimed, fault) }

// disarm takes back what is armed and aimed, and waits for the aimed faults
// already under way to end.
func (p *apiProxy) disarm() {
	p.set(&p.armed, "")
	p.set(&p.aimed, "")
	p.aimedLeft.Wait()
}

func (p *apiProxy) set(field *string, fault string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*field = fault
}

// take returns the armed fault of field and disarms it. An aimed fault
// taken counts as under way until its release handler calls
// p.aimedLeft.Done; it is counted here, under the mutex disarm takes first,
// so disarm's wait always sees it.
func (p *apiProxy) take(field *string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	fault := *field
	*field = ""
	if fault != "" {
		p.fired[fault]++
		if field == &p.aimed {
			p.aimedLeft.Add(1)
		}
	}
	return fault
}

// upstream is the API server's transport, asked for anew each time: a
// restarted server keeps its address and certificate, and client-go caches
// the transport.
func upstream() (http.RoundTripper, *url.URL, error) {
	cfg := bed.Kube.Config()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(cfg.Host)
	return rt, u, err
}

func (p *apiProxy) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/credentialsbindings/") {
		p.release(w, r)
		return
	}
	rt, u, err := upstream()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	forward := httputil.NewSingleHostReverseProxy(u)
	forward.Transport = rt
	forward.ErrorLog = quietProxyLog // requests the faults break are the point, not news
	switch p.take(&p.armed) {
	case cutRequest:
		hangUp(w)
	case cutReply:
		testbed.CutResponse(w, r, forward)
	default:
		forward.ServeHTTP(w, r)
	}
}

var quietProxyLog = log.New(io.Discard, "", 0)

// hangUp closes the client's connection without an answer.
func hangUp(w http.ResponseWriter) {
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// releasePatch is what the proxy reads of a release's merge patch.
type releasePatch struct {
	Metadata struct {
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func (p *apiProxy) release(w http.ResponseWriter, r *http.Request) {
	binding := path.Base(r.URL.Path)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		hangUp(w)
		return
	}
	var patch releasePatch
	_ = json.Unmarshal(body, &patch)

	p.w.mu.Lock()
	defer p.w.mu.Unlock()
	// The proxy's own work is bounded, not tied to the job: a job that
	// gave up must not end the watch over its update.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	instances, shoots, err := p.w.references(ctx, binding)
	if err != nil {
		http.Error(w, "test proxy: cannot count references now: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	fault := p.take(&p.aimed)
	if fault != "" {
		defer p.aimedLeft.Done()
	}
	if fault == aimedRequestDropped {
		hangUp(w)
		return
	}
	resp, forwardErr := p.forward(ctx, r, body)
	landed, err := p.wentThrough(ctx, binding, patch.Metadata.ResourceVersion, resp, forwardErr)
	if err != nil {
		p.fail(fmt.Sprintf("%s: cannot tell whether the update landed: %v", binding, err))
	}
	// Only a release carries the release mark; the job's other write, the
	// void of a release it cannot tell, changes no label.
	if releaseID := patch.Metadata.Annotations[hap.AnnotationRelease]; landed && releaseID != "" {
		p.record(binding, releaseID, instances, shoots)
	}
	switch fault {
	case aimedPostgres:
		if err := restartPostgres(ctx); err != nil {
			p.fail("restarting PostgreSQL: " + err.Error())
		}
	case aimedJobKill:
		p.pod.kill()
	}
	if fault != "" || forwardErr != nil {
		hangUp(w)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (p *apiProxy) forward(ctx context.Context, r *http.Request, body []byte) (*http.Response, error) {
	rt, u, err := upstream()
	if err != nil {
		return nil, err
	}
	out := r.Clone(ctx)
	out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = u.Scheme, u.Host, u.Host, ""
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp, err := rt.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	// Read it whole now: the answer is part of knowing what happened.
	answer, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	return resp, nil
}

// wentThrough tells whether the update landed: from the answer when there
// is one, else from the binding itself. While the world's mutex is held no
// one else writes bindings, so a binding past the update's resourceVersion
// was moved by this update.
func (p *apiProxy) wentThrough(ctx context.Context, binding, resourceVersion string, resp *http.Response, err error) (bool, error) {
	if err == nil {
		return resp.StatusCode/100 == 2, nil
	}
	for {
		b, getErr := p.w.s.Bindings.Get(ctx, binding, metav1.GetOptions{})
		if getErr == nil {
			return b.GetResourceVersion() != resourceVersion, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("%w (last read: %v)", err, getErr)
		case <-time.After(100 * time.Millisecond): // the API server is away: ask again
		}
	}
}

func (p *apiProxy) record(binding, releaseID string, instances, shoots int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.landed[binding] = append(p.landed[binding], releaseID)
	if instances > 0 || shoots > 0 {
		p.violations = append(p.violations, fmt.Sprintf("%s: released with %d active instance(s) and %d shoot(s)", binding, instances, shoots))
	}
}

func (p *apiProxy) fail(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.violations = append(p.violations, "test proxy: "+msg)
}

// releases counts the updates that landed.
func (p *apiProxy) releases() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, ids := range p.landed {
		n += len(ids)
	}
	return n
}
