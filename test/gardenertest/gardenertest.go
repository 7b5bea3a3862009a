// Package gardenertest builds what the Gardener API serves, for the tests of
// the Gardener adapter's packages: the client and its watch, the wire
// decoding and the export files. Objects come as the dynamic client and
// kubectl write them; protobuf as gardener-apiserver frames it.
package gardenertest

import (
	"encoding/binary"
	"net/http"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Shoot is a shoot as an unstructured object, in region eu-central-1 on
// aws with one worker pool; spec adds to (and is changed by) that.
func Shoot(name string, labels map[string]any, spec map[string]any) map[string]any {
	spec["region"] = "eu-central-1"
	spec["provider"] = map[string]any{"type": "aws", "workers": []any{map[string]any{"name": "cpu-worker-0", "minimum": 3}}}
	return map[string]any{
		"apiVersion": "core.gardener.cloud/v1beta1",
		"kind":       "Shoot",
		"metadata":   map[string]any{"name": name, "labels": labels},
		"spec":       spec,
		"status":     map[string]any{"technicalID": "shoot--kyma--" + name},
	}
}

// Binding is an aws CredentialsBinding as an unstructured object,
// referencing the Secret of its own name.
func Binding(name string, labels map[string]any) map[string]any {
	return map[string]any{
		"apiVersion":     "security.gardener.cloud/v1alpha1",
		"kind":           "CredentialsBinding",
		"metadata":       map[string]any{"name": name, "labels": labels},
		"provider":       map[string]any{"type": "aws"},
		"credentialsRef": map[string]any{"apiVersion": "v1", "kind": "Secret", "name": name},
	}
}

// ProtobufEnvelope wraps an object's message of the given kind as the API
// server does: the magic prefix "k8s\x00", then a runtime.Unknown.
func ProtobufEnvelope(t testing.TB, kind string, msg []byte) []byte {
	t.Helper()
	unknown := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: kind}, Raw: msg}
	envelope, err := unknown.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte("k8s\x00"), envelope...)
}

// ProtobufWatchFrame is one event of a protobuf watch stream: its length in
// four big-endian bytes, then the WatchEvent.
func ProtobufWatchFrame(t testing.TB, eventType string, object []byte) []byte {
	t.Helper()
	event := metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Raw: object}}
	msg, err := event.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)
}

// ExpiringWatchStream is a protobuf watch stream as gardener-apiserver ends
// one that fell too far behind: the shoot's message ADDED, a BOOKMARK at
// resourceVersion 42, then the ERROR of an expired watch (410 Gone).
// envelope wraps each message of a kind (ProtobufEnvelope, or one that adds
// unknown fields).
func ExpiringWatchStream(t testing.TB, shoot []byte, envelope func(kind string, msg []byte) []byte) []byte {
	t.Helper()
	bookmark := gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "42"}}
	bookmarkMsg, err := bookmark.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	status := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version"}
	statusMsg, err := status.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	stream = append(stream, ProtobufWatchFrame(t, "ADDED", envelope("Shoot", shoot))...)
	stream = append(stream, ProtobufWatchFrame(t, "BOOKMARK", envelope("Shoot", bookmarkMsg))...)
	return append(stream, ProtobufWatchFrame(t, "ERROR", envelope("Status", statusMsg))...)
}
