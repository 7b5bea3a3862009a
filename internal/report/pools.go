package report

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// PoolHistoryStore reads the pool history the metrics job records.
type PoolHistoryStore interface {
	PoolHistory(ctx context.Context, since time.Time) (map[hap.Pool][]hap.PoolSample, error)
}

// storedPools builds the pool view from the latest recorded sample of every
// pool: free and claimed bindings only, as the history keeps them.
func storedPools(ctx context.Context, s PoolHistoryStore, rules hap.PoolNamer, now time.Time) ([]hap.PoolRow, error) {
	history, err := s.PoolHistory(ctx, now.Add(-hap.ExhaustionWindow))
	if err != nil {
		return nil, fmt.Errorf("reading the pool history: %w", err)
	}
	return hap.BuildPoolView(hap.PoolStatsOfHistory(history), rules, history, now), nil
}

// WritePoolsTable prints the pool view as `hap-reconciler pools` shows it;
// wide adds the trend the days are estimated from and the nearly full GAs.
func WritePoolsTable(out io.Writer, rows []hap.PoolRow, l Layout) error {
	t := newTable(out, l, column{header: headerPool}, column{header: "EU"}, column{header: "SHARED"}, column{header: "FREE"},
		column{header: "CLAIMED"}, column{header: "DIRTY"}, column{header: "SHARED BINDINGS"}, column{header: "CLUSTERS"},
		column{header: "NEARLY FULL GAS"}, column{header: "DAYS LEFT"}, column{header: "FREE PER DAY", wide: true},
		column{header: "SAMPLES", wide: true}, column{header: "NEARLY FULL GA IDS", wide: true}, column{header: "RULES"})
	for _, r := range rows {
		days := "-"
		if r.DaysLeft != nil {
			days = strconv.FormatFloat(*r.DaysLeft, 'f', 1, 64)
		}
		t.row(r.HyperscalerType, strconv.FormatBool(r.EUAccess), strconv.FormatBool(r.Shared), strconv.Itoa(r.Free),
			strconv.Itoa(r.Claimed), strconv.Itoa(r.Dirty), strconv.Itoa(r.SharedBindings), strconv.Itoa(r.Clusters),
			strconv.Itoa(len(r.NearlyFull)), days, strconv.FormatFloat(r.FreePerDay, 'f', 2, 64), strconv.Itoa(r.Samples),
			dashIfEmpty(strings.Join(r.NearlyFull, ",")), rulesColumn(r))
	}
	return t.flush()
}

// rulesColumn lists the rules leading to the pool, and says so when only
// entries no real runtime meets lead there.
func rulesColumn(r hap.PoolRow) string {
	rules := dashIfEmpty(strings.Join(r.Rules, "; "))
	if r.Unreachable {
		return "UNREACHABLE (\"*\" inputs are literal, no real runtime meets them): " + rules
	}
	return rules
}
