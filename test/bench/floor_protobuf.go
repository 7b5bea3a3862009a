package bench

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the protobuf list, from k8s.io/apimachinery's
// generated.proto files: runtime.Unknown{raw = 2} wraps the list after the
// magic prefix; a list's metadata is field 1, ListMeta{continue = 3}.
const (
	unknownRawField   = 2
	listMetaField     = 1
	listContinueField = 3
)

// protobufMagic starts every protobuf body the API server writes.
var protobufMagic = []byte("k8s\x00")

// protobufContinue finds the continue token of a protobuf list: the list's
// metadata is its first field, so only the envelope and that field are read.
// The floor does not use the job's decoder, so that it stays the cost of
// the bytes alone.
func protobufContinue(page []byte) (string, error) {
	if !bytes.HasPrefix(page, protobufMagic) {
		return "", errors.New("not a protobuf body")
	}
	raw, err := lengthField(page[len(protobufMagic):], unknownRawField)
	if err != nil {
		return "", fmt.Errorf("envelope: %w", err)
	}
	meta, err := lengthField(raw, listMetaField)
	if err != nil {
		return "", fmt.Errorf("list: %w", err)
	}
	token, err := lengthField(meta, listContinueField)
	if errors.Is(err, errNoField) {
		return "", nil
	}
	return string(token), err
}

var errNoField = errors.New("field not present")

// lengthField returns the first length-delimited field number n of msg,
// skipping the fields before it.
func lengthField(msg []byte, n protowire.Number) ([]byte, error) {
	for len(msg) > 0 {
		num, typ, tagLen := protowire.ConsumeTag(msg)
		if tagLen < 0 {
			return nil, protowire.ParseError(tagLen)
		}
		msg = msg[tagLen:]
		if num == n && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(msg)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			return v, nil
		}
		l := protowire.ConsumeFieldValue(num, typ, msg)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		msg = msg[l:]
	}
	return nil, errNoField
}
