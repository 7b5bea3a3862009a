// Package gardener reads Shoots and CredentialsBindings from the Gardener API
// and updates binding labels. It pages every list and decodes only the few
// fields decisions need, so a run costs little more than fetching the pages
// and holds at most one page in memory.
//
// Two sources of the jobs' Gardener port live here, each the port itself:
// the Client, which asks the API server every time, and the Watcher, which
// answers lists from watch caches the client keeps current and asks the
// API server for everything else. Both say what to check when a request
// fails (explain.go) and log what each list cost (port.go).
//
// The package's concerns, by file:
//
//   - the client: client.go (configuration, REST clients), list.go (paged
//     lists, expired continue tokens), shoots.go and bindings.go (each
//     kind's reads and guarded writes), retry.go (transient failures),
//     errors.go (conflicts and refusals), kubeconfig.go (the kubeconfig's
//     fingerprint);
//   - the port: port.go (the jobs' methods on the Client), explain.go (the
//     hints: forbidden, unauthorized, not served, unreachable);
//   - the watch: watch.go (the Watcher and its lists), watch_port.go (the
//     jobs' methods on the Watcher), watch_source.go (list
//     and watch for a reflector, the cache's health), watch_objects.go (what
//     the caches hold), watch_changes.go (telling a decision's change).
//
// The watch stays in this package, in files of its own, because it is the
// client's lists kept current: it pages with the client's paged list, reads
// the same REST resources with the same retry and namespace, and hands
// GetBinding and writes to the client. As a package of its own it would
// need all of those exported, and its tests, which compare the watch with
// the client's own lists on both test beds, a second copy of the test
// bed's helpers (an internal test here cannot import a helper package
// that imports this one). Decoding (wire) needs nothing of the client,
// and the export files (exportfile) need only the decoding: both are
// packages of their own.
package gardener

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
)

const (
	// defaultPageSize is the number of objects asked for per list request.
	defaultPageSize int64 = 500
	// defaultRequestTimeout bounds each single request, one page included.
	defaultRequestTimeout = 30 * time.Second
	// defaultMaxRestarts is how often a list may start over after its
	// continue token expired before it fails.
	defaultMaxRestarts = 3
)

// Client talks to one Gardener project namespace.
type Client struct {
	namespace      string
	pageSize       int64
	requestTimeout time.Duration
	maxRestarts    int
	betweenPages   func(ctx context.Context, resource string, page int) error
	retry          wait.Backoff
	// host is the API server's address, for the hints (explain.go).
	host     string
	log      *zap.Logger
	shoots   resource
	bindings resource
}

// resource is one kind's REST endpoint in the namespace.
type resource struct {
	name   string
	client rest.Interface
}

// Option tunes a Client.
type Option func(*Client)

// WithRequestTimeout bounds each request (default 30s).
func WithRequestTimeout(d time.Duration) Option { return func(c *Client) { c.requestTimeout = d } }

// WithLog is where each list says what it cost (port.go); none by default,
// and none for nil.
func WithLog(log *zap.Logger) Option {
	return func(c *Client) {
		if log != nil {
			c.log = log
		}
	}
}

// withMaxRestarts caps how often one list starts over after an expired
// continue token (default 3).
func withMaxRestarts(n int) Option { return func(c *Client) { c.maxRestarts = n } }

// withBetweenPages runs fn after a page was handed to the caller and before
// the next page is requested; page counts from 1. An error from fn ends the
// list. Tests use it to act between pages, for example to expire the
// continue token.
func withBetweenPages(fn func(ctx context.Context, resource string, page int) error) Option {
	return func(c *Client) { c.betweenPages = fn }
}

// NewClient returns a client for namespace. pageSize 0 means defaultPageSize.
func NewClient(cfg *rest.Config, namespace string, pageSize int64, opts ...Option) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("gardener client: rest config is nil")
	}
	if namespace == "" {
		return nil, errors.New("gardener client: namespace is empty")
	}
	if pageSize < 0 {
		return nil, fmt.Errorf("gardener client: page size %d is negative", pageSize)
	}
	if pageSize == 0 {
		pageSize = defaultPageSize
	}
	c := &Client{namespace: namespace, pageSize: pageSize, requestTimeout: defaultRequestTimeout, maxRestarts: defaultMaxRestarts, retry: defaultRetry,
		host: cfg.Host, log: zap.NewNop()}
	for _, opt := range opts {
		opt(c)
	}
	if c.requestTimeout <= 0 {
		return nil, fmt.Errorf("gardener client: request timeout %s is not positive", c.requestTimeout)
	}
	if c.retry.Steps < 1 {
		return nil, fmt.Errorf("gardener client: retry steps %d, want at least 1", c.retry.Steps)
	}
	if c.maxRestarts < 0 {
		return nil, fmt.Errorf("gardener client: max restarts %d is negative", c.maxRestarts)
	}
	shoots, err := restClientFor(cfg, wire.ShootsGroupVersion)
	if err != nil {
		return nil, err
	}
	bindings, err := restClientFor(cfg, wire.BindingsGroupVersion)
	if err != nil {
		return nil, err
	}
	c.shoots = resource{name: "shoots", client: shoots}
	c.bindings = resource{name: "credentialsbindings", client: bindings}
	return c, nil
}

// restClientFor builds the REST client of one group: the client decodes raw
// response bytes itself, and only needs the scheme to read Status errors, in
// either encoding. Reads ask for protobuf first (see wire/format.go); request
// bodies are JSON.
func restClientFor(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, gv)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = wire.ReadContentTypes
	cfg.Wrap(wire.RecordContentType)
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = "hap-reconciler"
	}
	// client-go's default of 5 requests per second would make a list of
	// tens of pages mostly wait on the client's own rate limiter.
	if cfg.QPS == 0 {
		cfg.QPS = 50
	}
	if cfg.Burst == 0 {
		cfg.Burst = 100
	}
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("gardener client for %s: %w", gv, err)
	}
	return client, nil
}

// RESTConfig loads the config to reach Gardener: the kubeconfig at path, else
// the one KUBECONFIG names, else the in-cluster service account.
func RESTConfig(kubeconfigPath string) (*rest.Config, error) {
	if kubeconfigPath == "" && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no kubeconfig given and KUBECONFIG unset, in-cluster config: %w", err)
		}
		return cfg, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfigPath
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig (path %q, KUBECONFIG %q): %w", kubeconfigPath, os.Getenv(clientcmd.RecommendedConfigPathEnvVar), err)
	}
	return cfg, nil
}
