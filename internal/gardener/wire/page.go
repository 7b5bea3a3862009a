package wire

import (
	"fmt"
	"io"
)

// Page is one list response, decoded only as far as T needs.
type Page[T any] struct {
	Metadata struct {
		Continue        string
		ResourceVersion string
	}
	Items []T
}

// decodePage reads a list response, {"metadata": ..., "items": [...], ...} with
// its members in any order, item by item as it streams in.
func decodePage[T any, PT Item[T]](s *scanner, p *Page[T]) error {
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

// ReadPage reads a list response encoded in format into p, item by item as
// it streams in. p's items are only handed on by the caller once the page
// was read whole, so a page that broke off halfway can be read again
// without handing anything over twice.
func ReadPage[T any, PT Item[T]](format Format, r io.Reader, p *Page[T]) error {
	if format == Protobuf {
		return decodeProtobufPage[T, PT](r, p)
	}
	return decodePage[T, PT](newScanner(r), p)
}
