package testbed

import (
	"slices"
	"time"
)

// QuantileMillis is the q-quantile of d in milliseconds, the nearest rank
// at or below it; 0 for none. Measurements report it, never assert on it.
func QuantileMillis(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds()) / 1000
}
