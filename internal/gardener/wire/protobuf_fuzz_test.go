package wire

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"

	"github.com/kyma-project/hap-reconciler/test/gardenertest"
)

// FuzzDecodeProtobuf feeds arbitrary bytes to every protobuf reader: none
// may panic, and where the generated decoders read a list too, the items
// must agree with theirs.
func FuzzDecodeProtobuf(f *testing.F) {
	rng := rand.New(rand.NewPCG(24, 6))
	for range 3 {
		s, b := randomShoot(rng), randomBinding(rng)
		shoots := protobufListBody(f, rng, "ShootList", randomListMeta(rng), []*gardencorev1beta1.Shoot{&s})
		f.Add(shoots)
		f.Add(shoots[:len(shoots)/2])
		f.Add(protobufListBody(f, rng, "CredentialsBindingList", randomListMeta(rng), []*securityv1alpha1.CredentialsBinding{&b}))
		msg, err := s.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(gardenertest.ProtobufWatchFrame(f, "ADDED", protobufEnvelope(f, rng, "Shoot", msg)))
	}
	f.Add([]byte("k8s\x00"))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, body []byte) {
		var shoots Page[ShootItem]
		if err := decodeProtobufPage[ShootItem](bytes.NewReader(body), &shoots); err == nil {
			var typed gardencorev1beta1.ShootList
			if msg, err := typedMessage(body); err == nil && typed.Unmarshal(msg) == nil {
				want := make([]ShootItem, 0, len(typed.Items))
				for i := range typed.Items {
					want = append(want, shootItemOf(&typed.Items[i]))
				}
				if len(shoots.Items) != len(want) || (len(want) > 0 && !reflect.DeepEqual(shoots.Items, want)) ||
					shoots.Metadata.Continue != typed.Continue || shoots.Metadata.ResourceVersion != typed.ResourceVersion {
					t.Fatalf("shoots %+v, the generated decoder read %+v", shoots, typed)
				}
			}
		}
		var bindings Page[BindingItem]
		if err := decodeProtobufPage[BindingItem](bytes.NewReader(body), &bindings); err == nil {
			var typed securityv1alpha1.CredentialsBindingList
			if msg, err := typedMessage(body); err == nil && typed.Unmarshal(msg) == nil {
				want := make([]BindingItem, 0, len(typed.Items))
				for i := range typed.Items {
					want = append(want, bindingItemOf(&typed.Items[i]))
				}
				if len(bindings.Items) != len(want) || (len(want) > 0 && !reflect.DeepEqual(bindings.Items, want)) {
					t.Fatalf("bindings %+v, the generated decoder read %+v", bindings.Items, typed.Items)
				}
			}
		}
		var binding BindingItem
		_ = DecodeObject(Protobuf, body, &binding)
		events := NewEventReader(Protobuf, bytes.NewReader(body))
		for {
			_, object, err := events.Next()
			if err != nil {
				break
			}
			// What the watch makes of an event's object (cachedShoot,
			// cachedBinding in internal/gardener).
			var shoot ShootItem
			if DecodeObject(Protobuf, object, &shoot) == nil {
				_ = shoot.Shoot()
			}
			var binding BindingItem
			if DecodeObject(Protobuf, object, &binding) == nil {
				_, _ = binding.Binding()
			}
			_, _ = DecodeStatus(Protobuf, object)
		}
	})
}
