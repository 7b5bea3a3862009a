package gardener

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

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
		Continue        string `json:"continue"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Items []T `json:"items"`
}

// listPaged hands every object of res to each, one page at a time.
//
// A continue token can expire mid-list (410 Gone once etcd compacted past
// the list's revision). The list then starts over from the first page, after
// calling onReset: the caller drops what it received so far, and so ends up
// with every object exactly once, while nothing here holds more than one page.
// Any other error ends the list: a partial list must never pass for a whole.
func listPaged[T any](ctx context.Context, c *Client, res resource, onReset func(), each func(T) error) (ListStats, error) {
	var stats ListStats
	token := ""
	for {
		p, err := getPage[T](ctx, c, res, token)
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
// The page is decoded while it streams in: the client decodes items as the
// API server still encodes and sends the rest, instead of the two taking
// turns, and the page's bytes are never held whole. Its items are handed on
// only once the page is complete, so an attempt that broke off halfway is
// repeated without handing anything over twice.
func getPage[T any](ctx context.Context, c *Client, res resource, token string) (page[T], error) {
	var p page[T]
	err := c.readWithRetry(ctx, func(ctx context.Context) error {
		req := res.client.Get().Namespace(c.namespace).Resource(res.name).
			Param("limit", strconv.FormatInt(c.pageSize, 10))
		if token != "" {
			req = req.Param("continue", token)
		}
		body, err := req.Stream(ctx)
		if err != nil {
			return err
		}
		defer body.Close()
		p = page[T]{}
		return decodePage(jsontext.NewDecoder(body), &p)
	})
	return p, err
}

// decodePage reads a list response item by item: {"metadata": ...,
// "items": [...], ...} with its members in any order.
func decodePage[T any](dec *jsontext.Decoder, p *page[T]) error {
	if err := expectKind(dec, '{'); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return fmt.Errorf("decode list: %w", err)
		}
		// A token lives until the next read: keep the member's name.
		key := tok.String()
		switch key {
		case "metadata":
			err = json.UnmarshalDecode(dec, &p.Metadata)
		case "items":
			err = decodeItems(dec, &p.Items)
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return fmt.Errorf("decode list member %s: %w", key, err)
		}
	}
	return expectKind(dec, '}')
}

func decodeItems[T any](dec *jsontext.Decoder, items *[]T) error {
	if dec.PeekKind() == 'n' { // null: no items
		_, err := dec.ReadToken()
		return err
	}
	if err := expectKind(dec, '['); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		var item T
		if err := json.UnmarshalDecode(dec, &item); err != nil {
			return err
		}
		*items = append(*items, item)
	}
	return expectKind(dec, ']')
}

func expectKind(dec *jsontext.Decoder, want jsontext.Kind) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return fmt.Errorf("decode list: %w", err)
	}
	if tok.Kind() != want {
		return fmt.Errorf("decode list: found %v, want %v", tok.Kind(), want)
	}
	return nil
}

func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}
