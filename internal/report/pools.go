package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// PoolHistoryStore reads the pool history the metrics job records.
type PoolHistoryStore interface {
	PoolHistory(ctx context.Context, since time.Time) (map[hap.Pool][]hap.PoolSample, error)
}

// StoredPools builds the pool view from the latest recorded sample of every
// pool: free and claimed bindings only, as the history keeps them.
func StoredPools(ctx context.Context, s PoolHistoryStore, rules hap.PoolNamer, now time.Time) ([]hap.PoolRow, error) {
	history, err := s.PoolHistory(ctx, now.Add(-hap.ExhaustionWindow))
	if err != nil {
		return nil, fmt.Errorf("reading the pool history: %w", err)
	}
	return hap.BuildPoolView(hap.PoolStatsOfHistory(history), rules, history, now), nil
}

// WritePoolsTable prints the pool view as `hap-reconciler pools` shows it.
func WritePoolsTable(out io.Writer, rows []hap.PoolRow) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "POOL\tEU\tSHARED\tFREE\tCLAIMED\tDIRTY\tSHARED BINDINGS\tCLUSTERS\tNEARLY FULL GAS\tDAYS LEFT\tRULES")
	for _, r := range rows {
		days := "-"
		if r.DaysLeft != nil {
			days = strconv.FormatFloat(*r.DaysLeft, 'f', 1, 64)
		}
		fmt.Fprintf(w, "%s\t%t\t%t\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", r.HyperscalerType, r.EUAccess, r.Shared,
			r.Free, r.Claimed, r.Dirty, r.SharedBindings, r.Clusters, len(r.NearlyFull), days, rulesColumn(r))
	}
	return w.Flush()
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

// WritePoolsJSON prints the pool view as JSON.
func WritePoolsJSON(out io.Writer, rows []hap.PoolRow) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // rules read "->"
	return enc.Encode(rows)
}
