package report

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// ShadowReport is what `hap-reconciler report --shadow` prints: over a
// window, how many of KEB's own picks the candidate table would have made
// the same, and every pick where they part, with both answers and why.
type ShadowReport struct {
	ShadowSummary
	Differences []ShadowDifference `json:"differences"`
}

// ShadowSummary counts KEB's compared picks since a moment.
type ShadowSummary struct {
	Since time.Time `json:"since"`
	// Picks counts KEB's compared picks; Agree those the table would have
	// made the same.
	Picks int `json:"picks"`
	Agree int `json:"agree"`
	// ByOutcome counts the picks per outcome: agree, deviation (the table
	// keeps an account Gardener shows full), claim (KEB took a binding the
	// table did not list), drift (both knew it and counted differently),
	// staleness (the table was too old; KEB's own choice stands).
	ByOutcome map[string]int `json:"byOutcome"`
}

// ShadowDifference is one pick where KEB and the table part.
type ShadowDifference struct {
	PickedAt        time.Time `json:"pickedAt"`
	InstanceID      string    `json:"instanceID"`
	GlobalAccountID string    `json:"globalAccountID"` // "" for a shared pool
	HyperscalerType string    `json:"hyperscalerType"`
	EUAccess        bool      `json:"euAccess"`
	KEBBinding      string    `json:"kebBinding"`
	// Table is the table's answer: a binding, "claim new" or "guarded";
	// "" when it was too old to answer.
	Table      string     `json:"table"`
	Outcome    string     `json:"outcome"`
	Why        string     `json:"why"`
	SnapshotAt *time.Time `json:"tableSnapshotAt,omitempty"`
}

// ShadowStore reads the compared picks.
type ShadowStore interface {
	ShadowPicks(ctx context.Context, since time.Time) ([]hap.ShadowResult, error)
}

// Shadow reads the picks compared since `since`.
func Shadow(ctx context.Context, s ShadowStore, since time.Time) (ShadowReport, error) {
	results, err := s.ShadowPicks(ctx, since)
	if err != nil {
		return ShadowReport{}, fmt.Errorf("reading KEB's compared picks: %w", err)
	}
	return buildShadowReport(results, since), nil
}

// buildShadowReport counts the compared picks and keeps the differences.
func buildShadowReport(results []hap.ShadowResult, since time.Time) ShadowReport {
	rep := ShadowReport{ShadowSummary: ShadowSummary{Since: since, ByOutcome: map[string]int{}}, Differences: []ShadowDifference{}}
	for _, o := range hap.ShadowOutcomes {
		rep.ByOutcome[o] = 0
	}
	for _, r := range results {
		rep.Picks++
		rep.ByOutcome[r.Outcome]++
		if r.Outcome == hap.ShadowAgree {
			rep.Agree++
			continue
		}
		d := ShadowDifference{PickedAt: r.At, InstanceID: r.InstanceID, GlobalAccountID: r.GlobalAccountID,
			HyperscalerType: r.Pool.HyperscalerType, EUAccess: r.Pool.EUAccess, KEBBinding: r.KEBBinding, Table: r.Table,
			Outcome: r.Outcome, Why: r.Detail}
		if !r.SnapshotAt.IsZero() {
			at := r.SnapshotAt
			d.SnapshotAt = &at
		}
		rep.Differences = append(rep.Differences, d)
	}
	return rep
}

// Summary is the report's one line: the picks, the agreement and the
// differences by reason.
func (rep ShadowSummary) Summary() string {
	if rep.Picks == 0 {
		return fmt.Sprintf("Since %s KEB made no pick the job could compare with the candidate table.", rep.Since.UTC().Format(time.RFC3339))
	}
	s := fmt.Sprintf("Since %s KEB made %d pick(s); the candidate table would have made the same pick in %d (%.1f%%).",
		rep.Since.UTC().Format(time.RFC3339), rep.Picks, rep.Agree, 100*float64(rep.Agree)/float64(rep.Picks))
	for _, o := range hap.ShadowOutcomes[1:] {
		if n := rep.ByOutcome[o]; n > 0 {
			s += fmt.Sprintf(" %s: %d.", o, n)
		}
	}
	return s
}

// WriteTable prints the summary and every difference; wide adds when the
// table answering was computed.
func (rep ShadowReport) WriteTable(out io.Writer, l Layout) error {
	l.note(out, "%s\n", rep.Summary())
	if len(rep.Differences) == 0 {
		return nil
	}
	l.note(out, "\n")
	t := newTable(out, l, column{header: "PICKED AT"}, column{header: "INSTANCE"}, column{header: headerGlobalAccount}, column{header: headerPool},
		column{header: "KEB TOOK"}, column{header: "TABLE ANSWERED"}, column{header: "TABLE COMPUTED", wide: true}, column{header: "OUTCOME"},
		column{header: "WHY"})
	for _, d := range rep.Differences {
		pool := hap.Pool{HyperscalerType: d.HyperscalerType, EUAccess: d.EUAccess}
		computed := "-"
		if d.SnapshotAt != nil {
			computed = d.SnapshotAt.UTC().Format(time.RFC3339)
		}
		t.row(d.PickedAt.UTC().Format(time.RFC3339), d.InstanceID, dashIfEmpty(d.GlobalAccountID), pool.String(), d.KEBBinding,
			dashIfEmpty(d.Table), computed, d.Outcome, d.Why)
	}
	return t.flush()
}
