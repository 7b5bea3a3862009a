package landscape

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"k8s.io/client-go/rest"
)

// loadWorkers bounds parallel creates: enough to keep a local API server
// busy on two cores without queueing most requests in its priority levels.
const loadWorkers = 16

// gardenerFinalizer is the finalizer Gardener keeps on shoots until their
// cluster is gone; a shoot deleted while holding it stays, being deleted.
const gardenerFinalizer = "gardener"

// Where the API server takes each kind, below /apis.
const (
	shootsPath   = "core.gardener.cloud/v1beta1"
	bindingsPath = "security.gardener.cloud/v1alpha1"
)

// LoadGardener creates the landscape's bindings and shoots in namespace,
// which must exist. Shoots marked Deleting are created with Gardener's
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
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("load landscape: %w", err)
	}
	c := creator{client: httpClient, host: cfg.Host, namespace: namespace}
	bindings := len(l.Bindings)
	return runParallel(ctx, bindings+len(l.Shoots), loadWorkers, func(ctx context.Context, i int) error {
		if i < bindings {
			b := l.Bindings[i]
			body, err := encodeBinding(b, namespace)
			if err != nil {
				return fmt.Errorf("binding %s: %w", b.Name, err)
			}
			return c.create(ctx, bindingsPath, "credentialsbindings", b.Name, body, false)
		}
		s := l.Shoots[i-bindings]
		body, err := encodeShoot(s)
		if err != nil {
			return fmt.Errorf("shoot %s: %w", s.Object.Name, err)
		}
		return c.create(ctx, shootsPath, "shoots", s.Object.Name, body, s.Deleting)
	}, progress)
}

// creator posts encoded objects into one namespace.
type creator struct {
	client    *http.Client
	host      string
	namespace string
}

// create posts body as a new object named name; with deleteAfter it then
// deletes it, which a finalizer turns into "being deleted".
func (c creator) create(ctx context.Context, groupVersion, resource, name string, body []byte, deleteAfter bool) error {
	collection := c.host + "/apis/" + groupVersion + "/namespaces/" + url.PathEscape(c.namespace) + "/" + resource
	if err := c.do(ctx, http.MethodPost, collection, body, http.StatusCreated); err != nil {
		return fmt.Errorf("create %s %s: %w", resource, name, err)
	}
	if !deleteAfter {
		return nil
	}
	// 200: deleted at once; 202: accepted, held by the finalizer.
	if err := c.do(ctx, http.MethodDelete, collection+"/"+url.PathEscape(name), nil, http.StatusOK, http.StatusAccepted); err != nil {
		return fmt.Errorf("delete %s %s: %w", resource, name, err)
	}
	return nil
}

func (c creator) do(ctx context.Context, method, target string, body []byte, ok ...int) error {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
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
	return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(answer))
}
