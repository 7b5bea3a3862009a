package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// decodeProtobufPage reads a list response in protobuf as it streams in:
// the envelope, whose raw field is the list message (ListMeta metadata = 1,
// repeated items = 2). Each item is decoded on its own and its bytes
// dropped, so only one item's bytes are held at a time, however large the
// page. Like decodePage it fills p and hands nothing on: the caller hands
// the items over once the whole page was read.
func decodeProtobufPage[T any, PT Item[T]](r io.Reader, p *Page[T]) error {
	if err := readProtobufPage[T, PT](newProtoStream(r), p); err != nil {
		return fmt.Errorf("decode protobuf list: %w", err)
	}
	return nil
}

func readProtobufPage[T any, PT Item[T]](s *protoStream, p *Page[T]) error {
	if err := s.magic(); err != nil {
		return err
	}
	var in interner
	var encoding string
	sawList := false
	for {
		num, typ, err := s.tag()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch num {
		case unknownRaw:
			// A repeated raw field replaces the earlier one, as it does
			// for the generated decoder.
			*p, sawList = Page[T]{}, true
			err = s.message("list", typ, func(num protowire.Number, typ protowire.Type) error {
				switch num {
				case listMetadata:
					return s.whole("list metadata", typ, func(msg []byte) error { return readListMeta(msg, p) })
				case listItems:
					return s.whole("list item", typ, func(msg []byte) error {
						var item T
						if err := PT(&item).decodeProtobuf(msg, &in); err != nil {
							return fmt.Errorf("item %d: %w", len(p.Items), err)
						}
						p.Items = append(p.Items, item)
						return nil
					})
				}
				return s.skip(typ)
			})
		case unknownContentEncoding:
			err = s.whole("envelope contentEncoding", typ, func(b []byte) error { encoding = string(b); return nil })
		default:
			err = s.skip(typ)
		}
		if err != nil {
			return err
		}
	}
	if encoding != "" {
		return fmt.Errorf("protobuf envelope: content encoding %q is not supported", encoding)
	}
	if !sawList {
		// The API server always writes the list, empty or not: a body
		// without it was cut before it.
		return fmt.Errorf("protobuf envelope without a list, after %d bytes: %w", s.read, io.ErrUnexpectedEOF)
	}
	return nil
}

func readListMeta[T any](msg []byte, p *Page[T]) error {
	return eachField("list metadata", msg, func(f protoField) error {
		switch f.num {
		case listMetaContinue:
			return f.setString("list metadata.continue", &p.Metadata.Continue)
		case listMetaResourceVersion:
			return f.setString("list metadata.resourceVersion", &p.Metadata.ResourceVersion)
		}
		return nil
	})
}

// protoStream reads protobuf fields from a stream, without holding more of
// it than the one field a caller asks for whole.
type protoStream struct {
	r    *bufio.Reader
	read int64 // bytes consumed so far
	// limit is where the innermost message being read ends; math.MaxInt64
	// at the top level, which ends with the stream.
	limit int64
	// field holds the field last read whole. It grows with the bytes that
	// arrive, not with the length a field claims.
	field bytes.Buffer
}

func newProtoStream(r io.Reader) *protoStream {
	return &protoStream{r: bufio.NewReaderSize(r, scanBufferSize), limit: math.MaxInt64}
}

// magic reads the bytes every protobuf body of the Kubernetes API starts
// with.
func (s *protoStream) magic() error {
	var got [4]byte
	n, err := io.ReadFull(s.r, got[:])
	s.read += int64(n)
	if err != nil {
		return s.ended(err)
	}
	if !bytes.Equal(got[:], protobufMagic) {
		return fmt.Errorf("protobuf body starts with %q, not the Kubernetes magic bytes", got[:])
	}
	return nil
}

// ended is the error for a stream that stopped inside a field: the
// reader's own error when it failed, else io.ErrUnexpectedEOF, which the
// caller repeats as a broken connection.
func (s *protoStream) ended(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("protobuf ends early, after %d bytes: %w", s.read, io.ErrUnexpectedEOF)
	}
	return err
}

// tag reads the next field's number and wire type. At the top level,
// io.EOF means the stream ended cleanly between fields.
func (s *protoStream) tag() (protowire.Number, protowire.Type, error) {
	if s.limit == math.MaxInt64 {
		if _, err := s.r.Peek(1); errors.Is(err, io.EOF) {
			return 0, 0, io.EOF
		}
	}
	v, err := s.varint()
	if err != nil {
		return 0, 0, err
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber || num > protowire.MaxValidNumber {
		return 0, 0, fmt.Errorf("protobuf byte %d: invalid field number %d", s.read, num)
	}
	return num, typ, nil
}

// varint reads one varint.
func (s *protoStream) varint() (uint64, error) {
	var v uint64
	for i := 0; i < binary64Len; i++ {
		if s.read >= s.limit {
			return 0, s.overrun()
		}
		b, err := s.r.ReadByte()
		if err != nil {
			return 0, s.ended(err)
		}
		s.read++
		if i == binary64Len-1 && b > 1 {
			break
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("protobuf byte %d: varint overflows 64 bits", s.read)
}

// binary64Len is the most bytes a varint of 64 bits takes.
const binary64Len = 10

func (s *protoStream) overrun() error {
	return fmt.Errorf("protobuf byte %d: a field runs past the end of its message", s.read)
}

// length reads a length-delimited field's length, which must fit in the
// message being read.
func (s *protoStream) length(what string, typ protowire.Type) (int64, error) {
	if typ != protowire.BytesType {
		return 0, fmt.Errorf("%s: wire type %d, want length-delimited", what, typ)
	}
	n, err := s.varint()
	if err != nil {
		return 0, err
	}
	if n > uint64(s.limit-s.read) {
		return 0, s.overrun()
	}
	return int64(n), nil
}

// message reads a length-delimited field as a message, calling field with
// each of its fields' number and wire type; field must read the value.
func (s *protoStream) message(what string, typ protowire.Type, field func(protowire.Number, protowire.Type) error) error {
	n, err := s.length(what, typ)
	if err != nil {
		return err
	}
	outer := s.limit
	s.limit = s.read + n
	defer func() { s.limit = outer }()
	for s.read < s.limit {
		num, typ, err := s.tag()
		if err != nil {
			return err
		}
		if err := field(num, typ); err != nil {
			return err
		}
	}
	return nil
}

// whole reads a length-delimited field whole and hands its bytes to use;
// they are valid during the call only.
func (s *protoStream) whole(what string, typ protowire.Type, use func([]byte) error) error {
	n, err := s.length(what, typ)
	if err != nil {
		return err
	}
	s.field.Reset()
	got, err := s.field.ReadFrom(io.LimitReader(s.r, n))
	s.read += got
	if err != nil {
		return s.ended(err)
	}
	if got < n {
		return s.ended(nil)
	}
	return use(s.field.Bytes())
}

// skip reads a value of wire type typ and drops it. Groups, which the
// Kubernetes API never writes, are refused.
func (s *protoStream) skip(typ protowire.Type) error {
	var n int64
	switch typ {
	case protowire.VarintType:
		_, err := s.varint()
		return err
	case protowire.Fixed32Type:
		n = 4
	case protowire.Fixed64Type:
		n = 8
	case protowire.BytesType:
		var err error
		if n, err = s.length("skipped field", typ); err != nil {
			return err
		}
	default:
		return fmt.Errorf("protobuf byte %d: wire type %d is not one the Kubernetes API writes", s.read, typ)
	}
	if n > s.limit-s.read {
		return s.overrun()
	}
	got, err := s.r.Discard(int(n))
	s.read += int64(got)
	if got < int(n) {
		return s.ended(err)
	}
	return nil
}
