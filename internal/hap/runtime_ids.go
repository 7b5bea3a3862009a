package hap

import "encoding/hex"

// RuntimeIDs holds the runtime IDs of a group of instances, which a run
// keeps for every active instance to attribute shoots to GAs. KEB writes a
// runtime ID as a UUID in canonical form (lowercase hex, 8-4-4-4-12); such
// an ID is held as its 16 bytes, a quarter of what the string takes with
// its header. Any other ID is held as written. Two IDs are the same exactly
// when their strings are: only the canonical form is packed, so no two
// spellings meet in one key.
type RuntimeIDs struct {
	uuids [][16]byte
	other []string
}

// RuntimeIDsOf holds ids.
func RuntimeIDsOf(ids ...string) RuntimeIDs {
	var r RuntimeIDs
	for _, id := range ids {
		r.Add(id)
	}
	return r
}

// Add holds one more ID.
func (r *RuntimeIDs) Add(id string) {
	if u, ok := packUUID(id); ok {
		r.uuids = append(r.uuids, u)
		return
	}
	r.other = append(r.other, id)
}

// Len counts the IDs held.
func (r RuntimeIDs) Len() int { return len(r.uuids) + len(r.other) }

// Strings returns the IDs as written: the UUIDs in the order they came,
// then the others in the order they came.
func (r RuntimeIDs) Strings() []string {
	out := make([]string, 0, r.Len())
	for _, u := range r.uuids {
		out = append(out, unpackUUID(u))
	}
	return append(out, r.other...)
}

// packUUID packs a UUID in canonical form into its 16 bytes.
func packUUID(id string) (u [16]byte, ok bool) {
	if len(id) != 36 {
		return u, false
	}
	j := 0
	for i := 0; i < len(id); {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if id[i] != '-' {
				return u, false
			}
			i++
			continue
		}
		hi, ok1 := lowerHexDigit(id[i])
		lo, ok2 := lowerHexDigit(id[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, true
}

func lowerHexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func unpackUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// runtimeIndex maps runtime IDs to values, packed as RuntimeIDs packs them.
type runtimeIndex[V any] struct {
	uuids map[[16]byte]V
	other map[string]V
}

// put maps every non-empty ID of ids to v.
func (x *runtimeIndex[V]) put(ids RuntimeIDs, v V) {
	if x.uuids == nil {
		x.uuids, x.other = make(map[[16]byte]V), make(map[string]V)
	}
	for _, u := range ids.uuids {
		x.uuids[u] = v
	}
	for _, id := range ids.other {
		if id != "" {
			x.other[id] = v
		}
	}
}

// get returns the value of id; the empty ID has none.
func (x *runtimeIndex[V]) get(id string) (V, bool) {
	if u, ok := packUUID(id); ok {
		v, found := x.uuids[u]
		return v, found
	}
	v, found := x.other[id]
	return v, found && id != ""
}
