// Package soak judges a long run of the job by its samples: for each series
// (the process's memory, goroutines, open files, database connections, and
// every table's rows), the least-squares slope per hour after a warm-up,
// and whether the line it draws stays within a stated bound over the run.
// test/differential's TestSoak takes the samples (make soak).
package soak

import (
	"maps"
	"math"
	"slices"
	"sort"
	"time"
)

// Sample is one look at the running job: a value per series.
type Sample struct {
	At     time.Time          `json:"at"`
	Values map[string]float64 `json:"values"`
}

// Bound says how far a series may drift over the fitted part of the run
// and still count as flat: the fitted line's change from the first to the
// last sample after the warm-up, at most Relative times the series' mean
// or Absolute, whichever is larger. Absolute covers the series whose mean
// is small (one row, a handful of connections).
type Bound struct {
	Relative float64 `json:"relative"`
	Absolute float64 `json:"absolute"`
}

// allowed is the drift the bound allows a series of this mean.
func (b Bound) allowed(mean float64) float64 {
	return math.Max(b.Relative*math.Abs(mean), b.Absolute)
}

// Verdict is one series judged.
type Verdict struct {
	Series  string `json:"series"`
	Samples int    `json:"samples"`
	// Start and End are the medians of the first and the last tenth of the
	// samples after the warm-up; Min and Max bound them all.
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	// SlopePerHour is the least-squares slope; Drift is what it adds up to
	// over the fitted hours, Allowed what the bound allows.
	SlopePerHour float64 `json:"slopePerHour"`
	Drift        float64 `json:"drift"`
	Allowed      float64 `json:"allowed"`
	Bound        Bound   `json:"bound"`
	Flat         bool    `json:"flat"`
}

// Judge fits every series of the samples taken warmUp or more after the
// first one, each against its bound.
func Judge(samples []Sample, warmUp time.Duration, bound func(series string) Bound) []Verdict {
	if len(samples) == 0 {
		return nil
	}
	from := samples[0].At.Add(warmUp)
	kept := slices.DeleteFunc(slices.Clone(samples), func(s Sample) bool { return s.At.Before(from) })
	names := map[string]bool{}
	for _, s := range kept {
		for name := range s.Values {
			names[name] = true
		}
	}
	var out []Verdict
	for _, name := range slices.Sorted(maps.Keys(names)) {
		var hours, values []float64
		for _, s := range kept {
			if v, ok := s.Values[name]; ok {
				hours = append(hours, s.At.Sub(from).Hours())
				values = append(values, v)
			}
		}
		out = append(out, judgeSeries(name, hours, values, bound(name)))
	}
	return out
}

func judgeSeries(name string, hours, values []float64, b Bound) Verdict {
	v := Verdict{Series: name, Samples: len(values), Bound: b}
	if len(values) == 0 {
		return v
	}
	tenth := max(1, len(values)/10)
	v.Start, v.End = median(values[:tenth]), median(values[len(values)-tenth:])
	v.Min, v.Max = slices.Min(values), slices.Max(values)
	v.Mean = mean(values)
	v.SlopePerHour = Slope(hours, values)
	v.Drift = v.SlopePerHour * (hours[len(hours)-1] - hours[0])
	v.Allowed = b.allowed(v.Mean)
	v.Flat = math.Abs(v.Drift) <= v.Allowed
	return v
}

// Slope is the least-squares slope of ys over xs; 0 when xs do not vary.
func Slope(xs, ys []float64) float64 {
	mx, my := mean(xs), mean(ys)
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	if den == 0 {
		return 0
	}
	return num / den
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// AllFlat reports whether every verdict is flat.
func AllFlat(vs []Verdict) bool {
	for _, v := range vs {
		if !v.Flat {
			return false
		}
	}
	return true
}
