package gardener

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
)

// ListStats tells what one list did.
type ListStats struct {
	// Pages counts every page request, those of abandoned attempts included.
	Pages int
	// Objects counts the objects handed over since the last reset: what the
	// caller holds when the list succeeds.
	Objects int
	// Restarts counts the times the list started over after its continue
	// token expired.
	Restarts int
	// ResourceVersion is the list's: a watch started from it misses nothing
	// the list did not see.
	ResourceVersion string
}

// errTooManyRestarts ends a list whose continue token kept expiring.
var errTooManyRestarts = errors.New("list restarted too often")

// listPaged hands every object of res to each, one page at a time.
//
// A continue token can expire mid-list (410 Gone once etcd compacted past
// the list's revision). The list then starts over from the first page, after
// calling onReset: the caller drops what it received so far, and so ends up
// with every object exactly once, while nothing here holds more than one page.
// Any other error ends the list: a partial list must never pass for a whole.
func listPaged[T any, PT wire.Item[T]](ctx context.Context, c *Client, res resource, onReset func(), each func(T) error) (ListStats, error) {
	var stats ListStats
	token := ""
	for {
		p, err := getPage[T, PT](ctx, c, res, token)
		stats.Pages++
		if err != nil {
			if token == "" || !isExpired(err) {
				return stats, fmt.Errorf("list %s in namespace %s, page %d: %w", res.name, c.namespace, stats.Pages, err)
			}
			if stats.Restarts >= c.maxRestarts {
				return stats, fmt.Errorf("list %s in namespace %s: %w (continue token expired %d times): %w",
					res.name, c.namespace, errTooManyRestarts, stats.Restarts+1, err)
			}
			stats.Restarts++
			stats.Objects = 0
			onReset()
			token = ""
			continue
		}
		if token == "" {
			// Later pages are served from the first page's snapshot.
			stats.ResourceVersion = p.Metadata.ResourceVersion
		}
		for _, item := range p.Items {
			if err := each(item); err != nil {
				return stats, err
			}
			stats.Objects++
		}
		if p.Metadata.Continue == "" {
			return stats, nil
		}
		token = p.Metadata.Continue
		if c.betweenPages != nil {
			if err := c.betweenPages(ctx, res.name, stats.Pages); err != nil {
				return stats, fmt.Errorf("list %s after page %d: %w", res.name, stats.Pages, err)
			}
		}
	}
}

// getPage reads one page, repeating it after transient failures (see
// readWithRetry); the token stays valid across the attempts.
//
// The page is read as protobuf or JSON, whichever the API server answered
// (wire/format.go), and decoded while it streams in: the client decodes items as the
// API server still encodes and sends the rest, instead of the two taking
// turns, and the page's bytes are never held whole. Its items are handed on
// only once the page is complete, so an attempt that broke off halfway is
// repeated without handing anything over twice.
func getPage[T any, PT wire.Item[T]](ctx context.Context, c *Client, res resource, token string) (wire.Page[T], error) {
	return readPage[T, PT](ctx, c, res, func(req *rest.Request) *rest.Request {
		req = req.Param("limit", strconv.FormatInt(c.pageSize, 10))
		if token != "" {
			req = req.Param("continue", token)
		}
		return req
	})
}

// readPage reads one list of res in c's namespace, with the parameters
// params adds, in the format the server answers, retried as every read is.
func readPage[T any, PT wire.Item[T]](ctx context.Context, c *Client, res resource, params func(*rest.Request) *rest.Request) (wire.Page[T], error) {
	var p wire.Page[T]
	err := c.readWithRetry(ctx, func(ctx context.Context) error {
		req := params(res.client.Get().Namespace(c.namespace).Resource(res.name))
		ctx, response := wire.WithContentTypeSlot(ctx)
		body, err := req.Stream(ctx)
		if err != nil {
			return err
		}
		defer body.Close()
		format, err := response.Format()
		if err != nil {
			return err
		}
		p = wire.Page[T]{}
		return wire.ReadPage[T, PT](format, body, &p)
	})
	return p, err
}

func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// CheckAccess asks for one shoot and one binding of the namespace: it fails,
// saying why, when the API server cannot be reached, refuses the
// credentials or does not let them list either kind.
func (c *Client) CheckAccess(ctx context.Context) error {
	for _, res := range []resource{c.shoots, c.bindings} {
		err := c.readWithRetry(ctx, func(ctx context.Context) error {
			return res.client.Get().Namespace(c.namespace).Resource(res.name).Param("limit", "1").Do(ctx).Error()
		})
		if err != nil {
			return fmt.Errorf("list %s in namespace %s: %w", res.name, c.namespace, err)
		}
	}
	return nil
}
