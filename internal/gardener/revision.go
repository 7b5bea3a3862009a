package gardener

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
)

// neverMatches is a label selector no binding carries: a list with it is
// empty, and its resourceVersion alone says something.
const neverMatches = "hap-reconciler.kyma-project.io/never-matches=x"

// BindingsRevision asks the API server for the current revision of the
// namespace's credentials bindings: a consistent list (resourceVersion "",
// no limit) with a selector that matches nothing, so the answer is an empty
// list whose resourceVersion is the revision the server read at. Every
// change the API server committed before the list was sent has a revision
// no greater. An API server that serves consistent lists from its watch
// cache first brings that cache up to the revision, so the watches it
// serves carry it in their next event or bookmark.
func (c *Client) BindingsRevision(ctx context.Context) (uint64, error) {
	p, err := readPage[wire.BindingItem](ctx, c, c.bindings, func(req *rest.Request) *rest.Request {
		return req.Param("labelSelector", neverMatches)
	})
	if err != nil {
		err = fmt.Errorf("read the current revision of %s in namespace %s: %w", c.bindings.name, c.namespace, err)
		return 0, c.explain(err, c.bindings.name, true)
	}
	if len(p.Items) > 0 {
		return 0, fmt.Errorf("read the current revision of %s: the selector %s matched %d of them", c.bindings.name, neverMatches, len(p.Items))
	}
	return parseRevision(p.Metadata.ResourceVersion)
}

// parseRevision reads a resourceVersion as the number it is. Kubernetes calls
// resourceVersions opaque; an etcd-backed API server's are etcd's
// revisions, one counter that only grows, and so are those its watch cache
// serves: the API server's own cache compares them as numbers, and so does
// this job. Gardener's API server stores in etcd.
func parseRevision(resourceVersion string) (uint64, error) {
	if resourceVersion == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(resourceVersion, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("resourceVersion %q is not a revision: %w", resourceVersion, err)
	}
	return n, nil
}
