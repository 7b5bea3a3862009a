package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// typedMessage is the object message in a protobuf body, unwrapped by the
// API machinery's own generated decoder.
func typedMessage(body []byte) ([]byte, error) {
	if !bytes.HasPrefix(body, protobufMagic) {
		return nil, errors.New("no magic")
	}
	var unknown runtime.Unknown
	if err := unknown.Unmarshal(body[len(protobufMagic):]); err != nil {
		return nil, err
	}
	return unknown.Raw, nil
}

// jsonTime is how the JSON encoding writes a deletion timestamp, read as
// the JSON path reads it.
func jsonTime(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// shootItemOf is what a decoder must read from a fully decoded Shoot.
func shootItemOf(s *gardencorev1beta1.Shoot) ShootItem {
	var it ShootItem
	it.Metadata.Name, it.Metadata.ResourceVersion = s.Name, s.ResourceVersion
	it.Metadata.DeletionTimestamp = jsonTime(s.DeletionTimestamp)
	it.Metadata.RuntimeID = s.Labels[hap.LabelRuntimeID]
	it.Spec.CredentialsBindingName = deref(s.Spec.CredentialsBindingName)
	it.Spec.SecretBindingName = deref(s.Spec.SecretBindingName)
	return it
}

// bindingItemOf is what a decoder must read from a fully decoded
// CredentialsBinding.
func bindingItemOf(b *securityv1alpha1.CredentialsBinding) BindingItem {
	var it BindingItem
	it.Metadata.Name, it.Metadata.ResourceVersion = b.Name, b.ResourceVersion
	if len(b.Labels) > 0 {
		it.Metadata.Labels = maps.Clone(b.Labels)
	}
	it.Metadata.ReleaseID = b.Annotations[hap.AnnotationRelease]
	it.Provider.Type = b.Provider.Type
	return it
}

// decodeBoth decodes a protobuf page and the same list, fully decoded and
// written as JSON, by the JSON path.
func decodeBoth[T any, PT Item[T]](t *testing.T, body []byte, typedJSON any) (proto, viaJSON Page[T]) {
	t.Helper()
	if err := decodeProtobufPage[T, PT](bytes.NewReader(body), &proto); err != nil {
		t.Fatalf("decode the protobuf page: %v", err)
	}
	js, err := json.Marshal(typedJSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := decodePage[T, PT](newScanner(bytes.NewReader(js)), &viaJSON); err != nil {
		t.Fatalf("decode the same page as JSON: %v", err)
	}
	return proto, viaJSON
}

func TestProtobufShootPagesReadAsTheFullDecodeAndTheJSONPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 2))
	for round := range 300 {
		shoots := make([]*gardencorev1beta1.Shoot, rng.IntN(6))
		for i := range shoots {
			s := randomShoot(rng)
			shoots[i] = &s
		}
		body := protobufListBody(t, rng, "ShootList", randomListMeta(rng), shoots)

		msg, err := typedMessage(body)
		if err != nil {
			t.Fatal(err)
		}
		var typed gardencorev1beta1.ShootList
		if err := typed.Unmarshal(msg); err != nil {
			t.Fatalf("round %d: the generated decoder refuses the body: %v", round, err)
		}
		proto, viaJSON := decodeBoth[ShootItem](t, body, &typed)

		want := Page[ShootItem]{Items: []ShootItem{}}
		want.Metadata.Continue, want.Metadata.ResourceVersion = typed.Continue, typed.ResourceVersion
		for i := range typed.Items {
			want.Items = append(want.Items, shootItemOf(&typed.Items[i]))
		}
		assertSamePage(t, round, "full decode", proto, want)
		assertSamePage(t, round, "JSON path", proto, viaJSON)
		for i, it := range proto.Items {
			if got, want := it.Shoot(), viaJSON.Items[i].Shoot(); got != want {
				t.Fatalf("round %d, shoot %d: %+v from protobuf, %+v from JSON", round, i, got, want)
			}
		}
	}
}

func TestProtobufBindingPagesReadAsTheFullDecodeAndTheJSONPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 3))
	skipped := 0
	for round := range 300 {
		bindings := make([]*securityv1alpha1.CredentialsBinding, rng.IntN(6))
		for i := range bindings {
			b := randomBinding(rng)
			bindings[i] = &b
		}
		body := protobufListBody(t, rng, "CredentialsBindingList", randomListMeta(rng), bindings)

		msg, err := typedMessage(body)
		if err != nil {
			t.Fatal(err)
		}
		var typed securityv1alpha1.CredentialsBindingList
		if err := typed.Unmarshal(msg); err != nil {
			t.Fatalf("round %d: the generated decoder refuses the body: %v", round, err)
		}
		proto, viaJSON := decodeBoth[BindingItem](t, body, &typed)

		want := Page[BindingItem]{Items: []BindingItem{}}
		want.Metadata.Continue, want.Metadata.ResourceVersion = typed.Continue, typed.ResourceVersion
		for i := range typed.Items {
			want.Items = append(want.Items, bindingItemOf(&typed.Items[i]))
		}
		assertSamePage(t, round, "full decode", proto, want)
		assertSamePage(t, round, "JSON path", proto, viaJSON)
		for i, it := range proto.Items {
			got, gotErr := it.Binding()
			wantB, wantErr := viaJSON.Items[i].Binding()
			if !reflect.DeepEqual(got, wantB) || errString(gotErr) != errString(wantErr) {
				t.Fatalf("round %d, binding %d: %+v (%v) from protobuf, %+v (%v) from JSON", round, i, got, gotErr, wantB, wantErr)
			}
			if gotErr != nil {
				skipped++
			}
		}
	}
	if skipped == 0 {
		t.Fatal("no generated binding was unreadable: the skipped path went untested")
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// assertSamePage compares two decoded pages; an empty page's items may be
// nil or empty.
func assertSamePage[T any](t *testing.T, round int, what string, got, want Page[T]) {
	t.Helper()
	if len(got.Items) == 0 && len(want.Items) == 0 {
		got.Items, want.Items = nil, nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round %d: protobuf page differs from the %s:\n got %+v\nwant %+v", round, what, got, want)
	}
}

func TestProtobufObjectReadsAsItsListItem(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 4))
	for range 50 {
		b := randomBinding(rng)
		msg, err := b.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var got BindingItem
		if err := DecodeObject(Protobuf, protobufEnvelope(t, rng, "CredentialsBinding", withUnknownFields(rng, msg)), &got); err != nil {
			t.Fatal(err)
		}
		if want := bindingItemOf(&b); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	}
}

// TestProtobufPageCutAnywhereIsAnErrorTheClientRepeats: a body that stops
// early, at any byte, is a broken connection (io.ErrUnexpectedEOF), never a
// shorter page.
func TestProtobufPageCutAnywhereIsAnErrorTheClientRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 5))
	shoots := []*gardencorev1beta1.Shoot{}
	for range 3 {
		s := randomShoot(rng)
		shoots = append(shoots, &s)
	}
	body := protobufListBody(t, rng, "ShootList", metav1.ListMeta{ResourceVersion: "7"}, shoots)
	// Unknown fields after the last item may be cut without a trace; the
	// list itself may not.
	msg, err := typedMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	listEnd := bytes.Index(body, msg) + len(msg)
	for n := range listEnd {
		var p Page[ShootItem]
		err := decodeProtobufPage[ShootItem](bytes.NewReader(body[:n]), &p)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut after %d of %d bytes: error %v, want io.ErrUnexpectedEOF", n, len(body), err)
		}
	}
}

func TestProtobufPageRefusesWhatIsNotAKubernetesProtobufList(t *testing.T) {
	for name, body := range map[string]string{
		"JSON":             `{"items":[]}`,
		"content encoding": string(protobufMagic) + "\x1a\x04gzip",
		"group wire type":  string(protobufMagic) + "\x0b",
		"field number 0":   string(protobufMagic) + "\x00",
		"item not bytes":   string(protobufMagic) + "\x12\x02\x10\x01",
		"overrun":          string(protobufMagic) + "\x12\x02\x12\x05abc",
	} {
		var p Page[ShootItem]
		err := decodeProtobufPage[ShootItem](strings.NewReader(body), &p)
		if err == nil {
			t.Errorf("%s: decoded as %+v, want an error", name, p)
		}
	}
}
