package wire

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Gardener's objects as gardener-apiserver serves them in protobuf are read
// here field by field: the fields below are read, every other field is
// skipped by its wire type, and no Gardener type is ever built. A body is
// the Kubernetes envelope (k8s.io/apimachinery/pkg/runtime/serializer/
// protobuf): the magic bytes, then a runtime.Unknown whose raw field holds
// the object's message.
//
// The field numbers are those of the .proto files the types are generated
// from:
//
//	k8s.io/apimachinery@v0.33.5/pkg/runtime/generated.proto: Unknown, RawExtension
//	k8s.io/apimachinery@v0.33.5/pkg/apis/meta/v1/generated.proto: ObjectMeta, ListMeta, Time, WatchEvent
//	github.com/gardener/gardener@v1.131.0/pkg/apis/core/v1beta1/generated.proto: Shoot, ShootSpec, ShootList
//	github.com/gardener/gardener@v1.131.0/pkg/apis/security/v1alpha1/generated.proto: CredentialsBinding, CredentialsBindingProvider, CredentialsBindingList
const (
	unknownRaw             protowire.Number = 2 // bytes raw = 2
	unknownContentEncoding protowire.Number = 3 // string contentEncoding = 3

	// ShootList and CredentialsBindingList alike.
	listMetadata protowire.Number = 1 // ListMeta metadata = 1
	listItems    protowire.Number = 2 // repeated items = 2

	listMetaResourceVersion protowire.Number = 2
	listMetaContinue        protowire.Number = 3

	objectMetaName              protowire.Number = 1
	objectMetaResourceVersion   protowire.Number = 6
	objectMetaDeletionTimestamp protowire.Number = 9  // Time
	objectMetaLabels            protowire.Number = 11 // map<string, string>
	objectMetaAnnotations       protowire.Number = 12 // map<string, string>

	// A map's entries are messages of key = 1 and value = 2.
	mapEntryKey   protowire.Number = 1
	mapEntryValue protowire.Number = 2

	timeSeconds protowire.Number = 1 // int64 seconds = 1; nanos = 2 is not read by Time.Unmarshal either

	watchEventType   protowire.Number = 1 // string type = 1
	watchEventObject protowire.Number = 2 // RawExtension object = 2
	rawExtensionRaw  protowire.Number = 1 // bytes raw = 1

	shootMetadata                   protowire.Number = 1
	shootSpec                       protowire.Number = 2
	shootSpecSecretBindingName      protowire.Number = 13
	shootSpecCredentialsBindingName protowire.Number = 23

	bindingMetadata     protowire.Number = 1
	bindingProvider     protowire.Number = 2
	bindingProviderType protowire.Number = 1
)

// protobufMagic starts every protobuf body of the Kubernetes API.
var protobufMagic = []byte("k8s\x00")

// protoField is one field of a message: the bytes of a length-delimited
// field, or the value of a varint. Fields of other wire types carry
// nothing read here.
type protoField struct {
	num    protowire.Number
	typ    protowire.Type
	bytes  []byte
	varint uint64
}

// eachField calls fn with each field of msg in order; what names msg in
// errors. Each field's value is checked to be complete, so a cut or
// corrupted message is an error, never a panic.
func eachField(what string, msg []byte, fn func(f protoField) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return fmt.Errorf("%s: %w", what, protowire.ParseError(n))
		}
		msg = msg[n:]
		f := protoField{num: num, typ: typ}
		switch typ {
		case protowire.BytesType:
			f.bytes, n = protowire.ConsumeBytes(msg)
		case protowire.VarintType:
			f.varint, n = protowire.ConsumeVarint(msg)
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if n < 0 {
			return fmt.Errorf("%s: field %d: %w", what, num, protowire.ParseError(n))
		}
		msg = msg[n:]
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// lengthDelimited returns the field's bytes: a string, bytes or an embedded
// message; any other wire type is an error, as it is to the generated
// decoders.
func (f protoField) lengthDelimited(what string) ([]byte, error) {
	if f.typ != protowire.BytesType {
		return nil, fmt.Errorf("%s: wire type %d, want length-delimited", what, f.typ)
	}
	return f.bytes, nil
}

// setString reads a string field into v.
func (f protoField) setString(what string, v *string) error {
	b, err := f.lengthDelimited(what)
	if err == nil {
		*v = string(b)
	}
	return err
}

// setTime reads a metav1.Time into v in the form the JSON path reads it:
// RFC 3339 in UTC, and "" for the zero time, which JSON writes as null.
// Like Time.Unmarshal it reads whole seconds only.
func (f protoField) setTime(what string, v *string) error {
	msg, err := f.lengthDelimited(what)
	if err != nil {
		return err
	}
	var seconds int64
	err = eachField(what, msg, func(f protoField) error {
		if f.num != timeSeconds {
			return nil
		}
		if f.typ != protowire.VarintType {
			return fmt.Errorf("%s.seconds: wire type %d, want varint", what, f.typ)
		}
		seconds = int64(f.varint)
		return nil
	})
	if err != nil {
		return err
	}
	*v = ""
	if t := time.Unix(seconds, 0); len(msg) > 0 && !t.IsZero() {
		*v = t.UTC().Format(time.RFC3339)
	}
	return nil
}

// mapEntry reads one entry of a map<string, string> and hands it to fn.
func (f protoField) mapEntry(what string, fn func(key, value []byte)) error {
	entry, err := f.lengthDelimited(what)
	if err != nil {
		return err
	}
	var key, value []byte
	err = eachField(what, entry, func(f protoField) error {
		// Error messages are put together only on error: a shoot has tens
		// of labels and annotations.
		switch {
		case f.num != mapEntryKey && f.num != mapEntryValue:
		case f.typ != protowire.BytesType:
			return fmt.Errorf("%s: entry field %d has wire type %d, want length-delimited", what, f.num, f.typ)
		case f.num == mapEntryKey:
			key = f.bytes
		default:
			value = f.bytes
		}
		return nil
	})
	if err == nil {
		fn(key, value)
	}
	return err
}

// protoMetadata reads an ObjectMeta message into m, handing each label to
// label and every other field to other (nil skips them).
func protoMetadata(msg []byte, m *objectMeta, label func(key, value []byte), other func(f protoField) error) error {
	return eachField("metadata", msg, func(f protoField) error {
		switch f.num {
		case objectMetaName:
			return f.setString("metadata.name", &m.Name)
		case objectMetaResourceVersion:
			return f.setString("metadata.resourceVersion", &m.ResourceVersion)
		case objectMetaLabels:
			if label == nil {
				return nil
			}
			return f.mapEntry("metadata.labels", label)
		}
		if other != nil {
			return other(f)
		}
		return nil
	})
}

// unwrapEnvelope returns the message of the object body holds.
func unwrapEnvelope(body []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(body, protobufMagic)
	if !ok {
		return nil, errors.New("protobuf body does not start with the Kubernetes magic bytes")
	}
	var raw []byte
	var encoding string
	err := eachField("protobuf envelope", rest, func(f protoField) (err error) {
		switch f.num {
		case unknownRaw:
			raw, err = f.lengthDelimited("protobuf envelope raw")
		case unknownContentEncoding:
			err = f.setString("protobuf envelope contentEncoding", &encoding)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if encoding != "" {
		return nil, fmt.Errorf("protobuf envelope: content encoding %q is not supported", encoding)
	}
	return raw, nil
}
