package hap

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// PoolKey names a pool the way KEB's selectors address it: hyperscalerType,
// euAccess, and whether the shared selector (shared=true) or the dedicated
// ones read it.
type PoolKey struct {
	Pool
	Shared bool
}

// PoolStats is what one pool holds, as KEB's selectors see it.
type PoolStats struct {
	PoolKey
	// Free: bindings KEB's claim selector returns. Claimed: bindings of some
	// GA its tenant selector returns. Dirty: released, waiting for the
	// account cleanup. For a shared pool only SharedBindings counts.
	Free, Claimed, Dirty, SharedBindings int
	// Clusters on the pool's bindings: the larger of shoots and active
	// instances, per binding.
	Clusters int
	// NearlyFull are the GAs whose last selectable binding in the pool is
	// nearly full: their next clusters claim a new binding soon.
	NearlyFull []string
}

// DecidePools sums, per pool KEB reads, the bindings by state and the
// clusters on them, and names the GAs about to claim another binding (a
// single selectable binding left, with at most a tenth of its limit free).
// candidates are as DecideCandidates returns them, grouped by GA and pool.
func DecidePools(t *Tally, candidates []Candidate) []PoolStats {
	stats := map[PoolKey]*PoolStats{}
	at := func(k PoolKey) *PoolStats {
		s, ok := stats[k]
		if !ok {
			s = &PoolStats{PoolKey: k}
			stats[k] = s
		}
		return s
	}
	t.Each(func(u *Usage) {
		b := u.Binding
		if b == nil || b.OutOfPool != "" {
			return
		}
		at(PoolKey{Pool: b.Pool, Shared: b.Shared}).add(u)
	})
	// Each group is counted over its run of rows, without a map of GAs.
	eachGroup(candidates, func(rows []Candidate) {
		if rows[0].GlobalAccountID != "" && nearlyFull(rows) {
			s := at(PoolKey{Pool: rows[0].Pool})
			s.NearlyFull = append(s.NearlyFull, rows[0].GlobalAccountID)
		}
	})
	out := make([]PoolStats, 0, len(stats))
	for _, s := range stats {
		slices.Sort(s.NearlyFull)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b PoolStats) int { return comparePoolKeys(a.PoolKey, b.PoolKey) })
	return out
}

// add counts u's binding by its state, and the clusters on it.
func (s *PoolStats) add(u *Usage) {
	b := u.Binding
	switch {
	case b.Shared:
		s.SharedBindings++
	case b.Dirty:
		s.Dirty++
	case b.Claimed():
		s.Claimed++
	default:
		s.Free++
	}
	s.Clusters += u.Effective()
}

// nearlyFull reports whether a GA is nearly full in a pool, rows its
// candidates there: one of its bindings is selectable and that one has a
// tenth of its limit or less left.
func nearlyFull(rows []Candidate) bool {
	var last *Candidate
	n := 0
	for i := range rows {
		if c := &rows[i]; c.Limit != nil && c.Selectable {
			last, n = c, n+1
		}
	}
	return n == 1 && *last.Headroom*10 <= *last.Limit
}

// comparePoolKeys orders pools by hyperscalerType, then non-EU first, then
// dedicated first.
func comparePoolKeys(a, b PoolKey) int {
	return cmp.Or(cmp.Compare(a.HyperscalerType, b.HyperscalerType), compareBool(a.EUAccess, b.EUAccess), compareBool(a.Shared, b.Shared))
}

// PoolSample is one run's count of a dedicated pool's free and claimed
// bindings, as the pool history keeps it.
type PoolSample struct {
	At      time.Time
	Free    int
	Claimed int
}

// Exhaustion is when a pool runs out of free bindings at its recent claim
// rate.
type Exhaustion struct {
	// FreePerDay is the trend of free bindings per day over the window:
	// negative while the pool is being drained.
	FreePerDay float64
	// Days until no free binding is left; +Inf when free bindings are not
	// going down, 0 when none is left.
	Days float64
	// Samples the estimate rests on; fewer than two give no trend.
	Samples int
}

// estimateExhaustion fits a straight line (least squares) through the free
// bindings of the samples within window before now, and says when it
// reaches zero. The latest sample gives the current count. A pool with
// fewer than two samples in the window, or one whose free count does not
// fall, has Days +Inf.
func estimateExhaustion(samples []PoolSample, now time.Time, window time.Duration) Exhaustion {
	var in []PoolSample
	for _, s := range samples {
		if !s.At.After(now) && now.Sub(s.At) <= window {
			in = append(in, s)
		}
	}
	e := Exhaustion{Days: math.Inf(1), Samples: len(in)}
	if len(in) == 0 {
		return e
	}
	slices.SortFunc(in, func(a, b PoolSample) int { return a.At.Compare(b.At) })
	latest := in[len(in)-1]
	if latest.Free == 0 {
		e.Days = 0
	}
	if len(in) < 2 {
		return e
	}
	var sumX, sumY, sumXY, sumXX float64
	origin := in[0].At
	for _, s := range in {
		x := s.At.Sub(origin).Hours() / 24
		y := float64(s.Free)
		sumX, sumY, sumXY, sumXX = sumX+x, sumY+y, sumXY+x*y, sumXX+x*x
	}
	n := float64(len(in))
	denominator := n*sumXX - sumX*sumX
	if denominator == 0 {
		return e // every sample at the same instant: no trend
	}
	e.FreePerDay = (n*sumXY - sumX*sumY) / denominator
	if e.FreePerDay < 0 && latest.Free > 0 {
		e.Days = float64(latest.Free) / -e.FreePerDay
	}
	return e
}
