package hap

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestRuntimeIDsKeepEveryIDAsWritten(t *testing.T) {
	ids := []string{
		"0b6f2c1e-9d3a-4c5b-8e7f-a1b2c3d4e5f6", // canonical: packed
		"0B6F2C1E-9D3A-4C5B-8E7F-A1B2C3D4E5F6", // upper case: as written
		"0b6f2c1e9d3a4c5b8e7fa1b2c3d4e5f6",     // no hyphens: as written
		"0b6f2c1e-9d3a-4c5b-8e7f-a1b2c3d4e5fg", // not hex
		"rt-1",
		"",
	}
	r := RuntimeIDsOf(ids...)
	if len(r.uuids) != 1 || r.Len() != len(ids) {
		t.Fatalf("packed %d of %d IDs, want 1 of %d", len(r.uuids), r.Len(), len(ids))
	}
	if got := r.Strings(); !reflect.DeepEqual(got, ids) {
		t.Errorf("Strings() = %q, want %q", got, ids)
	}
}

// An ID finds its owner exactly when the same string was indexed: two
// spellings of one UUID are two IDs, as KEB's string comparison has them.
func TestRuntimeIndexMatchesExactStrings(t *testing.T) {
	var x runtimeIndex[int32]
	x.put(RuntimeIDsOf("0b6f2c1e-9d3a-4c5b-8e7f-a1b2c3d4e5f6", "rt-1", ""), 1)
	x.put(RuntimeIDsOf("0B6F2C1E-9D3A-4C5B-8E7F-A1B2C3D4E5F6"), 2)
	for id, want := range map[string]int32{
		"0b6f2c1e-9d3a-4c5b-8e7f-a1b2c3d4e5f6": 1,
		"0B6F2C1E-9D3A-4C5B-8E7F-A1B2C3D4E5F6": 2,
		"rt-1":                                 1,
		"0b6f2c1e9d3a4c5b8e7fa1b2c3d4e5f6":     0,
		"":                                     0,
		"rt-2":                                 0,
	} {
		got, ok := x.get(id)
		if ok != (want != 0) || got != want {
			t.Errorf("get(%q) = %d, %v; want %d", id, got, ok, want)
		}
	}
}

// Property: on random IDs, canonical or nearly so, the packed index agrees
// with a plain map of strings.
func TestRuntimeIndexAgreesWithAMapOfStrings(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	randomID := func() string {
		b := []byte("00000000-0000-0000-0000-000000000000")
		for i := range b {
			switch {
			case b[i] == '-' && rng.IntN(50) == 0:
				b[i] = 'x'
			case b[i] != '-':
				b[i] = "0123456789abcdef"[rng.IntN(16)]
			}
		}
		if rng.IntN(50) == 0 {
			return string(b[:35])
		}
		return string(b)
	}
	// nearly turns one hex digit of id to upper case, if it has one.
	nearly := func(id string) string {
		b := []byte(id)
		for _, i := range rng.Perm(len(b)) {
			if 'a' <= b[i] && b[i] <= 'f' {
				b[i] -= 'a' - 'A'
				break
			}
		}
		return string(b)
	}
	var x runtimeIndex[int32]
	plain := map[string]int32{}
	var ids []string
	for i := range 2000 {
		id := randomID()
		if i%10 == 0 && len(ids) > 0 {
			id = nearly(ids[rng.IntN(len(ids))])
		}
		ids = append(ids, id)
		x.put(RuntimeIDsOf(id), int32(i+1))
		plain[id] = int32(i + 1)
	}
	for range 4000 {
		id := randomID()
		if rng.IntN(2) == 0 {
			id = ids[rng.IntN(len(ids))]
			if rng.IntN(2) == 0 {
				id = nearly(id)
			}
		}
		got, ok := x.get(id)
		want, wantOK := plain[id]
		if ok != wantOK || got != want {
			t.Fatalf("get(%q) = %d, %v; a map of strings says %d, %v", id, got, ok, want, wantOK)
		}
	}
}
