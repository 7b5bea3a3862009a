package gardener

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

func TestProtobufWatchStreamDecodesEventsBookmarksAndTheExpiredError(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 7))
	shoot := randomShoot(rng)
	shoot.Name, shoot.ResourceVersion, shoot.DeletionTimestamp = "c-one", "41", nil
	shoot.Labels = map[string]string{hap.LabelRuntimeID: "rt-1"}
	bindingName := "aws-0001"
	shoot.Spec.CredentialsBindingName = &bindingName
	msg, err := shoot.Marshal()
	if err != nil {
		t.Fatal(err)
	}
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
	stream = append(stream, protobufWatchFrame(t, "ADDED", protobufEnvelope(t, rng, "Shoot", withUnknownFields(rng, msg)))...)
	stream = append(stream, protobufWatchFrame(t, "BOOKMARK", protobufEnvelope(t, rng, "Shoot", bookmarkMsg))...)
	stream = append(stream, protobufWatchFrame(t, "ERROR", protobufEnvelope(t, rng, "Status", statusMsg))...)

	var ended []error
	d := &eventDecoder{body: io.NopCloser(bytes.NewReader(stream)), format: formatProtobuf,
		events: newEventReader(formatProtobuf, bytes.NewReader(stream)), decode: decodeShootEvent,
		ended: func(err error) { ended = append(ended, err) }}

	eventType, obj, err := d.Decode()
	want := hap.Shoot{Name: "c-one", BindingName: "aws-0001", RuntimeID: "rt-1"}
	if err != nil || eventType != watch.Added || obj.(*cachedShoot).shoot != want || obj.(*cachedShoot).ResourceVersion != "41" {
		t.Fatalf("first event: %s %+v %v, want ADDED of %+v at 41", eventType, obj, err, want)
	}
	eventType, obj, err = d.Decode()
	if err != nil || eventType != watch.Bookmark || obj.(*cachedShoot).ResourceVersion != "42" {
		t.Fatalf("second event: %s %+v %v, want a bookmark at 42", eventType, obj, err)
	}
	eventType, obj, err = d.Decode()
	if err != nil || eventType != watch.Error || obj.(*metav1.Status).Code != http.StatusGone {
		t.Fatalf("third event: %s %+v %v, want the 410 error", eventType, obj, err)
	}
	if len(ended) != 1 || !apierrors.IsResourceExpired(ended[0]) {
		t.Fatalf("the stream ended with %v, want the expired error", ended)
	}
	if _, _, err := d.Decode(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}
}

func TestProtobufWatchStreamCutInAnEventIsAnUnexpectedEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 8))
	shoot := randomShoot(rng)
	msg, err := shoot.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	frame := protobufWatchFrame(t, "MODIFIED", protobufEnvelope(t, rng, "Shoot", msg))
	for _, n := range []int{2, 4, len(frame) / 2, len(frame) - 1} {
		_, _, err := newEventReader(formatProtobuf, bytes.NewReader(frame[:n])).next()
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut after %d of %d bytes: %v, want io.ErrUnexpectedEOF", n, len(frame), err)
		}
	}
}
