package wire

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/gardenertest"
)

// Random Gardener objects, built with Gardener's own types, and their
// protobuf lists as gardener-apiserver would serve them, with fields no
// decoder here knows added throughout.

// pick returns one of vs.
func pick[V any](rng *rand.Rand, vs ...V) V { return vs[rng.IntN(len(vs))] }

// randomText is a short string, now and then empty or with characters JSON
// escapes.
func randomText(rng *rand.Rand) string {
	return pick(rng, "", "a", "aws-0001", "ga-7", "true", "false", "maybe", `q"uote\`, "é ü ✓", "line\nbreak", fmt.Sprint(rng.Uint64()))
}

func randomStringPtr(rng *rand.Rand) *string {
	switch rng.IntN(3) {
	case 0:
		return nil
	case 1:
		return new(string)
	}
	s := randomText(rng)
	return &s
}

// randomMap is nil, empty, or holds random entries and, now and then, the
// given keys.
func randomMap(rng *rand.Rand, keys ...string) map[string]string {
	switch rng.IntN(4) {
	case 0:
		return nil
	case 1:
		return map[string]string{}
	}
	m := map[string]string{}
	for range rng.IntN(4) {
		m["example.com/"+randomText(rng)] = randomText(rng)
	}
	for _, k := range keys {
		if rng.IntN(2) == 0 {
			m[k] = pick(rng, "", "true", "false", "True", "aws", "gcp", "ga-1", "maybe", "rt-"+fmt.Sprint(rng.IntN(99)))
		}
	}
	return m
}

// randomTime is nil, the zero time (which JSON writes as null), or a
// moment with nanoseconds, which neither encoding keeps.
func randomTime(rng *rand.Rand) *metav1.Time {
	switch rng.IntN(3) {
	case 0:
		return nil
	case 1:
		return &metav1.Time{}
	}
	return &metav1.Time{Time: time.Unix(rng.Int64N(4e9), rng.Int64N(1e9))}
}

func randomObjectMeta(rng *rand.Rand, labelKeys, annotationKeys []string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name:              pick(rng, "", "c-"+fmt.Sprint(rng.IntN(1e6)), randomText(rng)),
		Namespace:         "garden-kyma",
		UID:               types.UID(fmt.Sprintf("6a5e4a4e-0000-4000-8000-%012d", rng.IntN(1e6))),
		ResourceVersion:   pick(rng, "", fmt.Sprint(rng.Uint32())),
		Generation:        rng.Int64N(50),
		CreationTimestamp: metav1.Time{Time: time.Unix(rng.Int64N(2e9), 0)},
		DeletionTimestamp: randomTime(rng),
		Labels:            randomMap(rng, labelKeys...),
		Annotations:       randomMap(rng, annotationKeys...),
	}
	if rng.IntN(2) == 0 {
		m.Finalizers = []string{"gardener"}
		seconds := rng.Int64N(60)
		m.DeletionGracePeriodSeconds = &seconds
	}
	if rng.IntN(2) == 0 {
		m.ManagedFields = []metav1.ManagedFieldsEntry{{
			Manager: "gardener-apiserver", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)},
		}}
	}
	return m
}

func randomShoot(rng *rand.Rand) gardencorev1beta1.Shoot {
	s := gardencorev1beta1.Shoot{
		ObjectMeta: randomObjectMeta(rng, []string{hap.LabelRuntimeID, "account"}, nil),
		Spec: gardencorev1beta1.ShootSpec{
			CloudProfileName:       randomStringPtr(rng),
			Region:                 pick(rng, "eu-central-1", "westeurope", ""),
			SecretBindingName:      randomStringPtr(rng),
			CredentialsBindingName: randomStringPtr(rng),
			Kubernetes:             gardencorev1beta1.Kubernetes{Version: "1.33.4"},
			Provider: gardencorev1beta1.Provider{Type: pick(rng, "aws", "azure", "gcp"), Workers: []gardencorev1beta1.Worker{{
				Name: "cpu-worker", Minimum: 1, Maximum: 3,
				Machine: gardencorev1beta1.Machine{Type: "m6i.large"},
			}}},
		},
	}
	for i := range rng.IntN(3) {
		s.Status.Conditions = append(s.Status.Conditions, gardencorev1beta1.Condition{
			Type: gardencorev1beta1.ConditionType(fmt.Sprint("Condition", i)), Status: gardencorev1beta1.ConditionTrue,
			LastTransitionTime: metav1.Time{Time: time.Unix(rng.Int64N(2e9), 0)}, Reason: "Healthy", Message: randomText(rng),
		})
	}
	s.Status.IsHibernated = rng.IntN(2) == 0
	return s
}

func randomBinding(rng *rand.Rand) securityv1alpha1.CredentialsBinding {
	b := securityv1alpha1.CredentialsBinding{
		ObjectMeta: randomObjectMeta(rng,
			[]string{hap.LabelHyperscalerType, hap.LabelTenantName, hap.LabelShared, hap.LabelDirty, hap.LabelEUAccess, hap.LabelInternal},
			[]string{hap.AnnotationRelease, hap.AnnotationReleaseVoided}),
		Provider:       securityv1alpha1.CredentialsBindingProvider{Type: pick(rng, "", "aws", "azure", "gcp", "openstack")},
		CredentialsRef: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "garden-kyma", Name: randomText(rng)},
	}
	if rng.IntN(2) == 0 {
		b.Quotas = []corev1.ObjectReference{{Kind: "Quota", Name: "trial"}}
	}
	return b
}

// unknownFields is a few fields of every wire type a decoder that does not
// know their numbers must skip, numbered from 1000 up so that no generated
// type knows them either.
func unknownFields(rng *rand.Rand) []byte {
	var b []byte
	for range rng.IntN(4) {
		num := protowire.Number(1000 + rng.IntN(100))
		switch rng.IntN(4) {
		case 0:
			b = protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), rng.Uint64())
		case 1:
			b = protowire.AppendFixed32(protowire.AppendTag(b, num, protowire.Fixed32Type), rng.Uint32())
		case 2:
			b = protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), rng.Uint64())
		default:
			b = protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), []byte(randomText(rng)))
		}
	}
	return b
}

// withUnknownFields is an object's message with unknown fields added: at
// its top level and, as a second metadata field that the generated decoder
// merges into the first, inside its metadata.
func withUnknownFields(rng *rand.Rand, msg []byte) []byte {
	msg = append(msg, unknownFields(rng)...)
	if rng.IntN(2) == 0 {
		msg = protowire.AppendBytes(protowire.AppendTag(msg, 1, protowire.BytesType), unknownFields(rng))
	}
	return msg
}

// protoMarshaler is a generated Gardener type.
type protoMarshaler interface{ Marshal() ([]byte, error) }

// protobufListBody is the body gardener-apiserver serves for a list of
// items: the envelope around a list message, with unknown fields added at
// every level.
func protobufListBody[O protoMarshaler](t testing.TB, rng *rand.Rand, kind string, listMeta metav1.ListMeta, items []O) []byte {
	t.Helper()
	meta, err := listMeta.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	list := protowire.AppendBytes(protowire.AppendTag(nil, listMetadata, protowire.BytesType), meta)
	for _, item := range items {
		msg, err := item.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		list = protowire.AppendBytes(protowire.AppendTag(list, listItems, protowire.BytesType), withUnknownFields(rng, msg))
		list = append(list, unknownFields(rng)...)
	}
	return protobufEnvelope(t, rng, kind, list)
}

// protobufEnvelope wraps an object's message as the API server does, with
// unknown fields after the envelope.
func protobufEnvelope(t testing.TB, rng *rand.Rand, kind string, msg []byte) []byte {
	t.Helper()
	return append(gardenertest.ProtobufEnvelope(t, kind, msg), unknownFields(rng)...)
}

func randomListMeta(rng *rand.Rand) metav1.ListMeta {
	return metav1.ListMeta{ResourceVersion: pick(rng, "", fmt.Sprint(rng.Uint32())), Continue: pick(rng, "", "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ")}
}
