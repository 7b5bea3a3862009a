package wire

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/gardenertest"
)

func TestProtobufWatchStreamReadsEventsBookmarksAndTheExpiredError(t *testing.T) {
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
	stream := gardenertest.ExpiringWatchStream(t, withUnknownFields(rng, msg), func(kind string, msg []byte) []byte {
		return protobufEnvelope(t, rng, kind, msg)
	})

	events := NewEventReader(Protobuf, bytes.NewReader(stream))
	eventType, raw, err := events.Next()
	var item ShootItem
	if err == nil {
		err = DecodeObject(Protobuf, raw, &item)
	}
	want := hap.Shoot{Name: "c-one", BindingName: "aws-0001", RuntimeID: "rt-1"}
	if err != nil || eventType != watch.Added || item.Shoot() != want || item.Metadata.ResourceVersion != "41" {
		t.Fatalf("first event: %s %+v %v, want ADDED of %+v at 41", eventType, item, err, want)
	}
	eventType, raw, err = events.Next()
	var mark ShootItem
	if err == nil {
		err = DecodeObject(Protobuf, raw, &mark)
	}
	if err != nil || eventType != watch.Bookmark || mark.Metadata.ResourceVersion != "42" {
		t.Fatalf("second event: %s %+v %v, want a bookmark at 42", eventType, mark, err)
	}
	eventType, raw, err = events.Next()
	var got *metav1.Status
	if err == nil {
		got, err = DecodeStatus(Protobuf, raw)
	}
	if err != nil || eventType != watch.Error || got.Code != http.StatusGone || !apierrors.IsResourceExpired(apierrors.FromObject(got)) {
		t.Fatalf("third event: %s %+v %v, want the 410 error", eventType, got, err)
	}
	if _, _, err := events.Next(); !errors.Is(err, io.EOF) {
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
	frame := gardenertest.ProtobufWatchFrame(t, "MODIFIED", protobufEnvelope(t, rng, "Shoot", msg))
	for _, n := range []int{2, 4, len(frame) / 2, len(frame) - 1} {
		_, _, err := NewEventReader(Protobuf, bytes.NewReader(frame[:n])).Next()
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut after %d of %d bytes: %v, want io.ErrUnexpectedEOF", n, len(frame), err)
		}
	}
}
