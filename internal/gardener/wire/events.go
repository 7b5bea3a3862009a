package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// EventReader reads a watch stream one event at a time: its type and its
// object's bytes, valid until the next call.
type EventReader interface {
	Next() (watch.EventType, []byte, error)
}

// NewEventReader reads the watch stream body, encoded in format.
func NewEventReader(format Format, body io.Reader) EventReader {
	if format == Protobuf {
		return &protobufEvents{r: body}
	}
	return jsonEvents{json.NewDecoder(body)}
}

// jsonEvents reads a JSON watch stream: one {"type": ..., "object": ...}
// after the other.
type jsonEvents struct{ d *json.Decoder }

func (e jsonEvents) Next() (watch.EventType, []byte, error) {
	var event struct {
		Type   watch.EventType `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	err := e.d.Decode(&event)
	return event.Type, event.Object, err
}

// maxWatchFrame bounds one protobuf watch event. An object is at most
// etcd's request limit (1.5 MiB by default); a frame claiming far more is
// corrupt, not large.
const maxWatchFrame = 64 << 20

// protobufEvents reads a protobuf watch stream: each event a
// metav1.WatchEvent message (type = 1, object = 2, a RawExtension whose
// raw = 1 is the object in its envelope), after its length in four
// big-endian bytes.
type protobufEvents struct {
	r     io.Reader
	frame bytes.Buffer
}

func (e *protobufEvents) Next() (watch.EventType, []byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(e.r, size[:]); err != nil {
		return "", nil, err
	}
	n := int64(binary.BigEndian.Uint32(size[:]))
	if n > maxWatchFrame {
		return "", nil, fmt.Errorf("watch event of %d bytes, more than the %d an event may have", n, maxWatchFrame)
	}
	e.frame.Reset()
	// The frame grows with the bytes that arrive, not with the length the
	// stream claims.
	got, err := e.frame.ReadFrom(io.LimitReader(e.r, n))
	if err != nil {
		return "", nil, err
	}
	if got < n {
		return "", nil, fmt.Errorf("watch event cut after %d of %d bytes: %w", got, n, io.ErrUnexpectedEOF)
	}
	var eventType string
	var object []byte
	err = eachField("watch event", e.frame.Bytes(), func(f protoField) error {
		switch f.num {
		case watchEventType:
			return f.setString("watch event type", &eventType)
		case watchEventObject:
			ext, err := f.lengthDelimited("watch event object")
			if err != nil {
				return err
			}
			return eachField("watch event object", ext, func(f protoField) (err error) {
				if f.num == rawExtensionRaw {
					object, err = f.lengthDelimited("watch event object raw")
				}
				return err
			})
		}
		return nil
	})
	return watch.EventType(eventType), object, err
}

// DecodeStatus decodes the Status a watch's error event carries.
func DecodeStatus(format Format, raw []byte) (*metav1.Status, error) {
	status := &metav1.Status{}
	if format == JSON {
		return status, json.Unmarshal(raw, status)
	}
	msg, err := unwrapEnvelope(raw)
	if err != nil {
		return nil, err
	}
	return status, status.Unmarshal(msg)
}
