package gardener

import (
	"mime"
	"net/http"
	"path"
	"sort"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// formatRecorder sees every response a client receives and keeps the media
// types that answered each kind of request with success: "list", "watch",
// "get" or "patch". Tests read it to know which decoder really ran. Error
// answers are left out: even the CRD bed sends its Status (a built-in
// kind) as protobuf, and client-go reads those itself.
type formatRecorder struct {
	mu   sync.Mutex
	seen map[string]map[string]int
}

func (r *formatRecorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
			mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			r.mu.Lock()
			if r.seen == nil {
				r.seen = map[string]map[string]int{}
			}
			kind := formatRequestKind(req)
			if r.seen[kind] == nil {
				r.seen[kind] = map[string]int{}
			}
			r.seen[kind][mediaType]++
			r.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func formatRequestKind(req *http.Request) string {
	switch {
	case req.Method == http.MethodPatch:
		return "patch"
	case req.URL.Query().Get("watch") == "true":
		return "watch"
	}
	switch path.Base(req.URL.Path) {
	case "shoots", "credentialsbindings":
		return "list"
	}
	return "get"
}

// wantMediaType is what a server answers reads with: gardener-apiserver
// protobuf, the CRD bed JSON, custom resources having no protobuf.
func (s apiServer) wantMediaType() string {
	if s.kube.ServesGardenerAPIServer() {
		return runtime.ContentTypeProtobuf
	}
	return runtime.ContentTypeJSON
}

// assertAnswered fails the test unless every request of each kind was
// answered in mediaType, and at least one was.
func (r *formatRecorder) assertAnswered(t *testing.T, mediaType string, kinds ...string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, kind := range kinds {
		seen := r.seen[kind]
		if len(seen) != 1 || seen[mediaType] == 0 {
			var got []string
			for m := range seen {
				got = append(got, m)
			}
			sort.Strings(got)
			t.Errorf("%s requests were answered in %v, want %s only", kind, got, mediaType)
		}
	}
}

// recordingClient is the server's client whose responses rec sees.
func (s apiServer) recordingClient(t *testing.T, namespace string, pageSize int64, opts ...Option) (*Client, *formatRecorder) {
	t.Helper()
	rec := &formatRecorder{}
	cfg := rest.CopyConfig(s.kube.Config())
	cfg.Wrap(rec.wrap)
	c, err := NewClient(cfg, namespace, pageSize, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}
