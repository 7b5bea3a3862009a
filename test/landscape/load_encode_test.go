package landscape

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// The loader posts its own encoding of the generated objects; the API server
// must receive what the typed objects say, field for field, as a client
// converting them through client-go's unstructured form would send, plus
// the two changes loading makes. The landscape, the tests' truth, stays as
// generated.
func TestEncodedObjectsAreTheGeneratedOnesWithTheLoadersChanges(t *testing.T) {
	l := Generate(Options{Seed: 3, GlobalAccounts: 12})
	deleting := slices.IndexFunc(l.Shoots, func(s *Shoot) bool { return s.Deleting })
	if deleting < 0 {
		t.Fatal("the landscape has no shoot being deleted")
	}

	b := l.Bindings[0]
	body, err := encodeBinding(b, "garden-kyma")
	if err != nil {
		t.Fatal(err)
	}
	want := viaUnstructured(t, b)
	want["credentialsRef"].(map[string]any)["namespace"] = "garden-kyma"
	if got := decoded(t, body); !reflect.DeepEqual(got, want) {
		t.Errorf("binding body\n got %v\nwant %v", got, want)
	}
	if b.CredentialsRef.Namespace != "" {
		t.Errorf("encoding changed the generated binding: namespace %q", b.CredentialsRef.Namespace)
	}

	for _, s := range []*Shoot{l.Shoots[slices.IndexFunc(l.Shoots, func(s *Shoot) bool { return !s.Deleting })], l.Shoots[deleting]} {
		before := slices.Clone(s.Object.Finalizers)
		body, err := encodeShoot(s)
		if err != nil {
			t.Fatal(err)
		}
		want := viaUnstructured(t, s.Object)
		if s.Deleting {
			meta := want["metadata"].(map[string]any)
			meta["finalizers"] = append(asSlice(meta["finalizers"]), gardenerFinalizer)
		}
		if got := decoded(t, body); !reflect.DeepEqual(got, want) {
			t.Errorf("shoot %s (deleting %v) body differs from the generated object", s.Object.Name, s.Deleting)
		}
		if !slices.Equal(s.Object.Finalizers, before) {
			t.Errorf("encoding changed shoot %s's finalizers to %v", s.Object.Name, s.Object.Finalizers)
		}
	}
}

// viaUnstructured is obj as JSON values after client-go's conversion.
func viaUnstructured(t *testing.T, obj any) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return decoded(t, data)
}

func decoded(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
