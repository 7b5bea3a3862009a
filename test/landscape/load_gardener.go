package landscape

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"k8s.io/client-go/rest"
)

// loadWorkers bounds parallel creates: enough to keep a local API server
// busy on two cores without queueing most requests in its priority levels.
const loadWorkers = 16

// gardenerFinalizer is the finalizer Gardener keeps on shoots until their
// cluster is gone; a shoot deleted while holding it stays, being deleted.
const gardenerFinalizer = "gardener"

// Where the API server takes each kind.
const (
	corePath     = "api/v1"
	gardenerPath = "apis/core.gardener.cloud/v1beta1"
	securityPath = "apis/security.gardener.cloud/v1alpha1"
)

// LoadGardener creates the landscape's bindings and shoots in namespace,
// which must exist, on the CRD bed; LoadGardenerAPIServer loads the real
// gardener-apiserver, whose admission wants more. Shoots marked Deleting are created with Gardener's
// finalizer and then deleted, so they carry a deletionTimestamp. progress,
// when not nil, is called after each object from one goroutine at a time.
//
// Every object is a real create through the API server. The API server's
// work per object (decoding, pruning, managed fields, storing) is most of
// the cost, so the client does as little as it can beside it: each worker
// encodes its object straight from the generated value, posts the bytes and
// reads the answer without decoding it. Objects are encoded when their turn
// comes, so a 100,000-shoot landscape never exists twice in memory.
func LoadGardener(ctx context.Context, cfg *rest.Config, namespace string, l *Landscape, progress func(done, total int)) error {
	c, err := newCreator(cfg, namespace)
	if err != nil {
		return err
	}
	bindings := len(l.Bindings)
	return runParallel(ctx, bindings+len(l.Shoots), loadWorkers, func(ctx context.Context, i int) error {
		if i < bindings {
			return c.createBinding(ctx, l.Bindings[i])
		}
		s := l.Shoots[i-bindings]
		body, err := encodeShoot(s)
		if err != nil {
			return fmt.Errorf("shoot %s: %w", s.Object.Name, err)
		}
		return c.create(ctx, gardenerPath, "shoots", s.Object.Name, body, s.Deleting)
	}, progress)
}

// creator posts encoded objects into one namespace.
type creator struct {
	client    *http.Client
	host      string
	namespace string
}

func newCreator(cfg *rest.Config, namespace string) (creator, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return creator{}, fmt.Errorf("load landscape: %w", err)
	}
	return creator{client: httpClient, host: cfg.Host, namespace: namespace}, nil
}

func (c creator) createBinding(ctx context.Context, b *securityv1alpha1.CredentialsBinding) error {
	body, err := encodeBinding(b, c.namespace)
	if err != nil {
		return fmt.Errorf("binding %s: %w", b.Name, err)
	}
	return c.create(ctx, securityPath, "credentialsbindings", b.Name, body, false)
}

// collection is the URL of a namespaced resource in c's namespace.
func (c creator) collection(apiPath, resource string) string {
	return c.host + "/" + apiPath + "/namespaces/" + url.PathEscape(c.namespace) + "/" + resource
}

// create posts body as a new object named name; with deleteAfter it then
// deletes it, which a finalizer turns into "being deleted".
func (c creator) create(ctx context.Context, apiPath, resource, name string, body []byte, deleteAfter bool) error {
	collection := c.collection(apiPath, resource)
	if err := c.do(ctx, http.MethodPost, collection, jsonBody, body, http.StatusCreated); err != nil {
		return fmt.Errorf("create %s %s: %w", resource, name, err)
	}
	if !deleteAfter {
		return nil
	}
	return c.markDeleted(ctx, collection, resource, name)
}

// markDeleted deletes an object that holds a finalizer, leaving it in place
// with a deletionTimestamp.
func (c creator) markDeleted(ctx context.Context, collection, resource, name string) error {
	// 200: deleted at once; 202: accepted, held by the finalizer.
	if err := c.do(ctx, http.MethodDelete, collection+"/"+url.PathEscape(name), jsonBody, nil, http.StatusOK, http.StatusAccepted); err != nil {
		return fmt.Errorf("delete %s %s: %w", resource, name, err)
	}
	return nil
}

// Content types of request bodies.
const (
	jsonBody       = "application/json"
	mergePatchBody = "application/merge-patch+json"
)

// statusError is an answer with a status code the request did not expect.
type statusError struct {
	code   int
	status string
	answer []byte
}

func (e *statusError) Error() string { return fmt.Sprintf("%s: %s", e.status, e.answer) }

func (c creator) do(ctx context.Context, method, target, contentType string, body []byte, ok ...int) error {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	for _, code := range ok {
		if resp.StatusCode == code {
			// Drained, not decoded, so the connection is reused.
			_, err := io.Copy(io.Discard, resp.Body)
			return err
		}
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	return &statusError{code: resp.StatusCode, status: resp.Status, answer: bytes.TrimSpace(answer)}
}
