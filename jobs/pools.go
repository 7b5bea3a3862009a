package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kyma-project/hap-reconciler/hap"
	"github.com/kyma-project/hap-reconciler/hap/rules"
)

// How far back the pool history reaches, and how much of it the exhaustion
// estimate reads: long enough to show a season, recent enough to follow
// today's claim rate.
const (
	PoolHistoryRetention = 90 * 24 * time.Hour
	ExhaustionWindow     = 14 * 24 * time.Hour
)

// PoolRow is one pool of the pool view: a pool the rules name, or one
// bindings exist for, with its counts and when it runs out.
type PoolRow struct {
	HyperscalerType string   `json:"hyperscalerType"`
	EUAccess        bool     `json:"euAccess"`
	Shared          bool     `json:"shared"`
	Rules           []string `json:"rules"`
	Free            int      `json:"free"`
	Claimed         int      `json:"claimed"`
	Dirty           int      `json:"dirty"`
	SharedBindings  int      `json:"sharedBindings"`
	Clusters        int      `json:"clusters"`
	NearlyFull      []string `json:"nearlyFullGlobalAccounts"`
	// DaysLeft is nil while free bindings are not going down.
	DaysLeft   *float64 `json:"daysUntilExhausted"`
	FreePerDay float64  `json:"freeBindingsPerDay"`
	Samples    int      `json:"historySamples"`
}

// Key is the row's pool.
func (r PoolRow) Key() hap.PoolKey {
	return hap.PoolKey{Pool: hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess}, Shared: r.Shared}
}

// BuildPoolView joins, for every pool the rules name (a rule with an open
// region expanding to the pools that exist) and every pool bindings exist
// for, the counts, the rules that lead there, and the exhaustion estimate
// from history. It is pure.
func BuildPoolView(stats []hap.PoolStats, rs rules.RuleSet, history map[hap.Pool][]hap.PoolSample, now time.Time) []PoolRow {
	rows := map[hap.PoolKey]*PoolRow{}
	at := func(k hap.PoolKey) *PoolRow {
		r, ok := rows[k]
		if !ok {
			r = &PoolRow{HyperscalerType: k.HyperscalerType, EUAccess: k.EUAccess, Shared: k.Shared}
			rows[k] = r
		}
		return r
	}
	existing := make([]hap.Pool, 0, len(stats))
	for _, s := range stats {
		existing = append(existing, s.Pool)
		r := at(s.PoolKey)
		r.Free, r.Claimed, r.Dirty, r.SharedBindings, r.Clusters, r.NearlyFull = s.Free, s.Claimed, s.Dirty, s.SharedBindings, s.Clusters, s.NearlyFull
	}
	for _, pr := range rs.Pools(existing) {
		r := at(hap.PoolKey{Pool: pr.Pool, Shared: pr.Shared})
		r.Rules = pr.Rules
	}
	out := make([]PoolRow, 0, len(rows))
	for k, r := range rows {
		if !k.Shared {
			e := hap.EstimateExhaustion(history[k.Pool], now, ExhaustionWindow)
			r.FreePerDay, r.Samples = e.FreePerDay, e.Samples
			if !math.IsInf(e.Days, 1) {
				days := e.Days
				r.DaysLeft = &days
			}
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b PoolRow) int { return hap.ComparePoolKeys(a.Key(), b.Key()) })
	return out
}

// LivePools gathers a fresh snapshot and builds the pool view on it with
// the recorded history, writing nothing. Without the job's tables (before
// the first migrate) there is no history and no estimate.
func (r *Runner) LivePools(ctx context.Context) ([]PoolRow, error) {
	f, err := r.Gather(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := r.Config.RuleSet()
	if err != nil {
		return nil, err
	}
	now := r.Now()
	history, err := r.Store.PoolHistory(ctx, now.Add(-ExhaustionWindow))
	if err != nil {
		r.Log.Warn("no pool history to estimate from: " + err.Error())
	}
	return BuildPoolView(hap.DecidePools(f.Tally, f.Candidates(r.Config.Policy())), rs, history, now), nil
}

// WritePoolsTable prints the pool view as `hap-reconciler pools` shows it.
func WritePoolsTable(out io.Writer, rows []PoolRow) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "POOL\tEU\tSHARED\tFREE\tCLAIMED\tDIRTY\tSHARED BINDINGS\tCLUSTERS\tNEARLY FULL GAS\tDAYS LEFT\tRULES")
	for _, r := range rows {
		days := "-"
		if r.DaysLeft != nil {
			days = strconv.FormatFloat(*r.DaysLeft, 'f', 1, 64)
		}
		fmt.Fprintf(w, "%s\t%t\t%t\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", r.HyperscalerType, r.EUAccess, r.Shared,
			r.Free, r.Claimed, r.Dirty, r.SharedBindings, r.Clusters, len(r.NearlyFull), days, dashIfEmpty(strings.Join(r.Rules, "; ")))
	}
	return w.Flush()
}

// WritePoolsJSON prints the pool view as JSON.
func WritePoolsJSON(out io.Writer, rows []PoolRow) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // rules read "->"
	return enc.Encode(rows)
}
