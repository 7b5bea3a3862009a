package hap

import (
	"math"
	"slices"
	"time"
)

// How far back the pool history reaches, and how much of it the exhaustion
// estimate reads: long enough to show a season, recent enough to follow
// today's claim rate.
const (
	PoolHistoryRetention = 90 * 24 * time.Hour
	ExhaustionWindow     = 14 * 24 * time.Hour
)

// NamedPool is a pool some entries of KEB's rule list can send runtimes to,
// with those entries.
type NamedPool struct {
	Pool   Pool
	Shared bool
	// Rules are the entries' texts, in list order.
	Rules []string
	// Unreachable: every one of those entries names "*" as an input, so no
	// real runtime is sent there; that the pool has no binding then fails
	// no provisioning.
	Unreachable bool
}

// PoolNamer is what the pool view needs of KEB's rule list: the pools it
// names, a rule with an open region expanding to the existing pools that
// fit (rules.RuleSet implements it).
type PoolNamer interface {
	Pools(existing []Pool) []NamedPool
}

// PoolRow is one pool of the pool view: a pool the rules name, or one
// bindings exist for, with its counts and when it runs out.
type PoolRow struct {
	HyperscalerType string   `json:"hyperscalerType"`
	EUAccess        bool     `json:"euAccess"`
	Shared          bool     `json:"shared"`
	Rules           []string `json:"rules"`
	// Unreachable: every rule leading here names "*" as an input, which KEB
	// reads literally, so no real runtime is sent here and an empty pool
	// fails no provisioning.
	Unreachable    bool     `json:"unreachable"`
	Free           int      `json:"free"`
	Claimed        int      `json:"claimed"`
	Dirty          int      `json:"dirty"`
	SharedBindings int      `json:"sharedBindings"`
	Clusters       int      `json:"clusters"`
	NearlyFull     []string `json:"nearlyFullGlobalAccounts"`
	// DaysLeft is nil while free bindings are not going down.
	DaysLeft   *float64 `json:"daysUntilExhausted"`
	FreePerDay float64  `json:"freeBindingsPerDay"`
	Samples    int      `json:"historySamples"`
}

// Key is the row's pool.
func (r PoolRow) Key() PoolKey {
	return PoolKey{Pool: Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess}, Shared: r.Shared}
}

// BuildPoolView joins, for every pool the rules name and every pool
// bindings exist for, the counts, the rules that lead there, and the
// exhaustion estimate from history.
func BuildPoolView(stats []PoolStats, rules PoolNamer, history map[Pool][]PoolSample, now time.Time) []PoolRow {
	rows := map[PoolKey]*PoolRow{}
	at := func(k PoolKey) *PoolRow {
		r, ok := rows[k]
		if !ok {
			r = &PoolRow{HyperscalerType: k.HyperscalerType, EUAccess: k.EUAccess, Shared: k.Shared}
			rows[k] = r
		}
		return r
	}
	existing := make([]Pool, 0, len(stats))
	for _, s := range stats {
		existing = append(existing, s.Pool)
		r := at(s.PoolKey)
		r.Free, r.Claimed, r.Dirty, r.SharedBindings, r.Clusters, r.NearlyFull = s.Free, s.Claimed, s.Dirty, s.SharedBindings, s.Clusters, s.NearlyFull
	}
	for _, pr := range rules.Pools(existing) {
		r := at(PoolKey{Pool: pr.Pool, Shared: pr.Shared})
		r.Rules, r.Unreachable = pr.Rules, pr.Unreachable
	}
	out := make([]PoolRow, 0, len(rows))
	for k, r := range rows {
		if !k.Shared {
			e := estimateExhaustion(history[k.Pool], now, ExhaustionWindow)
			r.FreePerDay, r.Samples = e.FreePerDay, e.Samples
			if !math.IsInf(e.Days, 1) {
				days := e.Days
				r.DaysLeft = &days
			}
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b PoolRow) int { return comparePoolKeys(a.Key(), b.Key()) })
	return out
}

// PoolStatsOfHistory is what the recorded history says of every dedicated
// pool: the free and claimed bindings of its latest sample.
func PoolStatsOfHistory(history map[Pool][]PoolSample) []PoolStats {
	var stats []PoolStats
	for pool, samples := range history {
		if len(samples) == 0 {
			continue
		}
		last := samples[len(samples)-1]
		stats = append(stats, PoolStats{PoolKey: PoolKey{Pool: pool}, Free: last.Free, Claimed: last.Claimed})
	}
	return stats
}
