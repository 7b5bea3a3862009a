package landscape

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestGenerateIsDeterministicForASeed(t *testing.T) {
	a := Generate(Options{Seed: 42})
	b := Generate(Options{Seed: 42})
	if !reflect.DeepEqual(mustJSON(t, a), mustJSON(t, b)) {
		t.Fatal("two landscapes generated from seed 42 differ")
	}
	c := Generate(Options{Seed: 43})
	if reflect.DeepEqual(mustJSON(t, a), mustJSON(t, c)) {
		t.Fatal("seeds 42 and 43 generated the same landscape")
	}
}

func TestShootsAreProductionSized(t *testing.T) {
	l := Generate(Options{Seed: 7, GlobalAccounts: 30})
	total := 0
	for _, s := range l.Shoots {
		data, err := json.Marshal(s.Object)
		if err != nil {
			t.Fatal(err)
		}
		total += len(data)
	}
	mean := total / len(l.Shoots)
	t.Logf("%d shoots, mean JSON size %d bytes", len(l.Shoots), mean)
	// The API server adds about 5 KB of managedFields and metadata, so
	// these are served as about 17 KB per shoot, as production's are.
	if mean < 11_000 || mean > 13_500 {
		t.Fatalf("mean shoot JSON size %d bytes, want about 12 KB (17 KB served)", mean)
	}
}

func mustJSON(t *testing.T, l *Landscape) []byte {
	t.Helper()
	data, err := json.Marshal(struct {
		GAs       []string
		Bindings  any
		Shoots    any
		Instances any
	}{l.GlobalAccounts, l.Bindings, l.Shoots, l.Instances})
	if err != nil {
		t.Fatal(err)
	}
	return data
}
