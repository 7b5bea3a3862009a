package gardener

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/gardenertest"
)

// The watch's event decoder over a protobuf stream as gardener-apiserver
// sends it; how the stream's frames and objects are read, unknown fields
// and all, is internal/gardener/wire's (events_test.go there).

func TestTheWatchDecodesEventsBookmarksAndTheExpiredErrorOfAProtobufStream(t *testing.T) {
	bindingName, region := "aws-0001", "eu-west-1"
	shoot := gardencorev1beta1.Shoot{
		ObjectMeta: metav1.ObjectMeta{Name: "c-one", ResourceVersion: "41", Labels: map[string]string{hap.LabelRuntimeID: "rt-1", "other": "x"},
			Annotations: map[string]string{"note": "y"}},
		Spec: gardencorev1beta1.ShootSpec{CredentialsBindingName: &bindingName, Region: region},
	}
	msg, err := shoot.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	stream := gardenertest.ExpiringWatchStream(t, msg, func(kind string, msg []byte) []byte {
		return gardenertest.ProtobufEnvelope(t, kind, msg)
	})

	var ended []error
	d := &eventDecoder{body: io.NopCloser(bytes.NewReader(stream)), format: wire.Protobuf,
		events: wire.NewEventReader(wire.Protobuf, bytes.NewReader(stream)), decode: decodeShootEvent,
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
