package soak

import (
	"math"
	"strings"
	"testing"
	"time"
)

func samplesOf(every time.Duration, values ...float64) []Sample {
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	out := make([]Sample, len(values))
	for i, v := range values {
		out[i] = Sample{At: start.Add(time.Duration(i) * every), Values: map[string]float64{"x": v}}
	}
	return out
}

func TestSlopeIsTheLeastSquaresFit(t *testing.T) {
	if got := Slope([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}); got != 2 {
		t.Errorf("slope of a line of slope 2: %v", got)
	}
	if got := Slope([]float64{0, 1, 2, 3}, []float64{5, 1, 5, 1}); math.Abs(got+0.8) > 1e-9 {
		t.Errorf("slope of a zigzag: %v, want -0.8", got)
	}
	if got := Slope([]float64{1, 1}, []float64{0, 9}); got != 0 {
		t.Errorf("slope without time: %v, want 0", got)
	}
}

// A sawtooth around a level is flat; a steady climb of a fifth of the mean
// over the run is not; the warm-up's climb is left out of the fit.
func TestJudgeCallsSawtoothFlatAndAClimbGrowing(t *testing.T) {
	bound := func(string) Bound { return Bound{Relative: 0.1} }
	var saw, climb, warm []float64
	for i := range 360 {
		saw = append(saw, 100+float64(i%12))
		climb = append(climb, 100+float64(i)*20/359)
		if i < 60 {
			warm = append(warm, float64(i)*10)
		} else {
			warm = append(warm, 600+float64(i%5))
		}
	}
	if v := Judge(samplesOf(10*time.Second, saw...), 0, bound)[0]; !v.Flat {
		t.Errorf("sawtooth: %+v, want flat", v)
	}
	v := Judge(samplesOf(10*time.Second, climb...), 0, bound)[0]
	if v.Flat || math.Abs(v.Drift-20) > 0.5 || math.Abs(v.SlopePerHour-20/(359*10/3600.0)) > 0.5 {
		t.Errorf("climb: %+v, want growing by 20", v)
	}
	if v := Judge(samplesOf(10*time.Second, warm...), 10*time.Minute, bound)[0]; !v.Flat || v.Samples != 300 {
		t.Errorf("after a warm-up of 60 samples: %+v, want flat over 300", v)
	}
}

func TestAnAbsoluteBoundCoversSmallSeries(t *testing.T) {
	v := Judge(samplesOf(time.Second, 1, 1, 2, 2, 3, 3), 0, func(string) Bound { return Bound{Relative: 0.1, Absolute: 3} })[0]
	if !v.Flat {
		t.Errorf("a series of a few within its absolute bound: %+v", v)
	}
	table := Table([]Verdict{v, {Series: HeapAllocBytes, Start: 8 * MiB, End: 9 * MiB, Drift: 2 * MiB}})
	for _, want := range []string{"| x | 6 | 1 | 3 |", "8.0 MiB", "**grows**"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
