package gardener

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// ErrTooManyRestarts ends a list whose continue token kept expiring.
var ErrTooManyRestarts = errors.New("list restarted too often")

// page is one list response, decoded only as far as T needs.
type page[T any] struct {
	Metadata struct {
		Continue        string
		ResourceVersion string
	}
	Items []T
}

// decodePage reads a list response, {"metadata": ..., "items": [...], ...} with
// its members in any order, item by item as it streams in.
func decodePage[T any, PT decoder[T]](s *scanner, p *page[T]) error {
	err := s.object("list", func(name []byte) error {
		switch string(name) {
		case "metadata":
			return s.object("list metadata", func(name []byte) error {
				switch string(name) {
				case "continue":
					return s.strOrNull("list metadata.continue", &p.Metadata.Continue)
				case "resourceVersion":
					return s.strOrNull("list metadata.resourceVersion", &p.Metadata.ResourceVersion)
				}
				return s.skip()
			})
		case "items":
			return s.array("list items", func() error {
				var item T
				if err := PT(&item).decode(s); err != nil {
					return fmt.Errorf("item %d: %w", len(p.Items), err)
				}
				p.Items = append(p.Items, item)
				return nil
			})
		}
		return s.skip()
	})
	if err != nil {
		return fmt.Errorf("decode list: %w", err)
	}
	return s.finish()
}

// listPaged hands every object of res to each, one page at a time.
//
// A continue token can expire mid-list (410 Gone once etcd compacted past
// the list's revision). The list then starts over from the first page, after
// calling onReset: the caller drops what it received so far, and so ends up
// with every object exactly once, while nothing here holds more than one page.
// Any other error ends the list: a partial list must never pass for a whole.
func listPaged[T any, PT decoder[T]](ctx context.Context, c *Client, res resource, onReset func(), each func(T) error) (ListStats, error) {
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
					res.name, c.namespace, ErrTooManyRestarts, stats.Restarts+1, err)
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
// (wire_format.go), and decoded while it streams in: the client decodes items as the
// API server still encodes and sends the rest, instead of the two taking
// turns, and the page's bytes are never held whole. Its items are handed on
// only once the page is complete, so an attempt that broke off halfway is
// repeated without handing anything over twice.
func getPage[T any, PT decoder[T]](ctx context.Context, c *Client, res resource, token string) (page[T], error) {
	var p page[T]
	err := c.readWithRetry(ctx, func(ctx context.Context) error {
		req := res.client.Get().Namespace(c.namespace).Resource(res.name).
			Param("limit", strconv.FormatInt(c.pageSize, 10))
		if token != "" {
			req = req.Param("continue", token)
		}
		ctx, response := withContentTypeSlot(ctx)
		body, err := req.Stream(ctx)
		if err != nil {
			return err
		}
		defer body.Close()
		format, err := response.format()
		if err != nil {
			return err
		}
		p = page[T]{}
		if format == formatProtobuf {
			return decodeProtobufPage[T, PT](body, &p)
		}
		return decodePage[T, PT](newScanner(body), &p)
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
