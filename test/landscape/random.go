package landscape

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// epoch anchors every generated timestamp, so a seed fully determines a
// landscape and nothing depends on when it was generated.
var epoch = time.Date(2025, time.June, 2, 9, 0, 0, 0, time.UTC)

// random wraps the seeded source with the few draws the generator needs.
type random struct{ *rand.Rand }

func newRandom(seed uint64) *random {
	return &random{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (r *random) chance(p float64) bool { return r.Float64() < p }

// between returns an int in [lo, hi].
func (r *random) between(lo, hi int) int { return lo + r.IntN(hi-lo+1) }

func (r *random) uuid() string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

const lowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"

func (r *random) alnum(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = lowerAlnum[r.IntN(len(lowerAlnum))]
	}
	return string(b)
}

func (r *random) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(len(digits))]
	}
	return string(b)
}

// before returns a whole-second time up to maxAgo before t.
func (r *random) before(t time.Time, maxAgo time.Duration) time.Time {
	return t.Add(-time.Duration(r.Int64N(int64(maxAgo/time.Second)+1)) * time.Second)
}

// after returns a whole-second time up to maxLater after t.
func (r *random) after(t time.Time, maxLater time.Duration) time.Time {
	return t.Add(time.Duration(r.Int64N(int64(maxLater/time.Second)+1)) * time.Second)
}

func pick[T any](r *random, xs []T) T { return xs[r.IntN(len(xs))] }
