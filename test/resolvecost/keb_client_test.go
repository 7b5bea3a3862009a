package resolvecost

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// kebRequestTimeout is requestTimeout of KEB's common/gardener/client.go:
// GetCredentialsBinding, GetCredentialsBindings and GetShoots each run
// under context.WithTimeout(context.Background(), requestTimeout).
const kebRequestTimeout = 10 * time.Second

// kebCalls is a resource of KEB's Gardener client: every GET and LIST under
// KEB's own timeout, whatever the caller's deadline. The caller's context
// still carries the pick's counters (withCounters): the bytes read and the
// time spent in these calls, decoding included.
type kebCalls struct{ dynamic.ResourceInterface }

func (k kebCalls) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	defer countersOf(ctx).gardenerCall(time.Now())
	ctx, cancel := context.WithTimeout(ctx, kebRequestTimeout)
	defer cancel()
	return k.ResourceInterface.Get(ctx, name, opts, sub...)
}

func (k kebCalls) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	defer countersOf(ctx).gardenerCall(time.Now())
	ctx, cancel := context.WithTimeout(ctx, kebRequestTimeout)
	defer cancel()
	return k.ResourceInterface.List(ctx, opts)
}

// kebGardener is KEB's Gardener client on the namespace: the bindings and
// the shoots, read through a dynamic client (JSON; KEB's builds its
// rest.Config from the kubeconfig alone) whose responses are counted.
// Unlike KEB's, its client-side rate limiter is lifted: picks made back to
// back ask far more often than KEB's provisionings do, and client-go's
// default of 5 requests a second would put the limiter's wait, not the
// step, in the figures.
func kebGardener(cfg *rest.Config, namespace string) (bindings, shoots dynamic.ResourceInterface, err error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt} })
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return kebCalls{dyn.Resource(testbed.CredentialsBindingsResource).Namespace(namespace)},
		kebCalls{dyn.Resource(testbed.ShootsResource).Namespace(namespace)}, nil
}

// counters are what one pick spent on Gardener: the response bytes it read
// (the body as the client reads it, after the transport undid the API
// server's gzip) and the time inside KEB's client's calls. The workers'
// picks overlap, so each pick carries its own in its context.
type counters struct {
	bytes    atomic.Int64
	gardener atomic.Int64 // nanoseconds
}

type countersKey struct{}

func withCounters(ctx context.Context, c *counters) context.Context {
	return context.WithValue(ctx, countersKey{}, c)
}

// countersOf is ctx's counters; nil, which counts nothing, when it has none.
func countersOf(ctx context.Context) *counters {
	c, _ := ctx.Value(countersKey{}).(*counters)
	return c
}

func (c *counters) gardenerCall(began time.Time) {
	if c != nil {
		c.gardener.Add(int64(time.Since(began)))
	}
}

// countingTransport counts the response bytes of each request into the
// counter its context carries.
type countingTransport struct{ next http.RoundTripper }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if c := countersOf(r.Context()); c != nil && resp != nil && resp.Body != nil {
		resp.Body = countingBody{ReadCloser: resp.Body, n: &c.bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	k, err := b.ReadCloser.Read(p)
	b.n.Add(int64(k))
	return k, err
}
