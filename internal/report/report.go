// Package report is the read side of the job: what `hap-reconciler report`
// and `hap-reconciler pools` print, from the job's stored tables or from a
// fresh snapshot decided on the spot, writing nothing.
package report

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Report is what `hap-reconciler report` prints: per GA and pool, every
// candidate binding with its counts, limit, rank and drift, and the findings
// about bindings that are no candidates (missing, free, dirty).
type Report struct {
	Source string `json:"source"` // "stored" or "live"
	// ComputedAt is when the table's snapshot was taken; zero (left out of
	// the JSON) when no candidates run ever wrote it.
	ComputedAt time.Time     `json:"computedAt,omitzero"`
	Groups     []ReportGroup `json:"groups"`
	Other      []hap.Finding `json:"otherFindings"`
	// Shadow counts KEB's own picks compared with the table (stored
	// reports only); `report --shadow` lists the differences.
	Shadow *ShadowSummary `json:"shadow,omitempty"`
}

// ReportGroup is one (GA, pool). GlobalAccountID is empty for a shared pool.
type ReportGroup struct {
	GlobalAccountID string `json:"globalAccountID"`
	HyperscalerType string `json:"hyperscalerType"`
	EUAccess        bool   `json:"euAccess"`
	Next            string `json:"next"` // the binding provisioning picks next, or "" to claim a new one
	ClaimNew        bool   `json:"claimNew"`
	// Guarded: KEB's guard (minBindingsForGuard) fails every provisioning
	// of the GA in this pool; nothing is picked and nothing claimed.
	Guarded bool `json:"guarded"`
	// KEBChoice is set when KEB's own database-only choice differs from
	// Next ("claim new" or a binding name), with the reason.
	KEBChoice string      `json:"kebChoice,omitempty"`
	Deviation string      `json:"deviation,omitempty"`
	Rows      []ReportRow `json:"bindings"`
}

// ReportRow is one candidate binding and its open findings.
type ReportRow struct {
	Binding        string   `json:"binding"`
	DBCount        int      `json:"dbCount"`
	ShootCount     int      `json:"shootCount"`
	EffectiveCount int      `json:"effectiveCount"`
	Limit          *int     `json:"limit"`
	Headroom       *int     `json:"headroom"`
	Rank           int      `json:"rank"`
	Selectable     bool     `json:"selectable"`
	Drift          []string `json:"drift"`
}

// Store reads the job's stored tables for a report.
type Store interface {
	Candidates(ctx context.Context, ga string) ([]hap.StoredCandidate, error)
	OpenFindings(ctx context.Context, ga string) ([]hap.OpenFinding, error)
	ShadowStore
	PoolHistoryStore
}

// Stored reads the last run's candidate table and open findings.
func Stored(ctx context.Context, s Store, ga string) (Report, error) {
	stored, err := s.Candidates(ctx, selector(ga))
	if err != nil {
		return Report{}, fmt.Errorf("reading the candidate table: %w", err)
	}
	open, err := s.OpenFindings(ctx, hap.AllGlobalAccounts)
	if err != nil {
		return Report{}, fmt.Errorf("reading open drift findings: %w", err)
	}
	findings := make([]hap.Finding, len(open))
	for i, o := range open {
		findings[i] = o.Finding
	}
	rows := make([]hap.Candidate, len(stored))
	var at time.Time
	for i, c := range stored {
		rows[i] = c.Candidate
		at = c.ComputedAt
	}
	if len(stored) == 0 && ga != "" {
		// No row of this GA's: when the table was computed is read
		// from the others, which say whether it ever was.
		all, err := s.Candidates(ctx, hap.AllGlobalAccounts)
		if err != nil {
			return Report{}, fmt.Errorf("reading the candidate table: %w", err)
		}
		if len(all) > 0 {
			at = all[0].ComputedAt
		}
	}
	rep := buildReport(rows, findings, ga)
	rep.Source, rep.ComputedAt = "stored", at
	return rep, nil
}

// selector turns the report's GA filter ("" for all) into the store's.
func selector(ga string) string {
	if ga == "" {
		return hap.AllGlobalAccounts
	}
	return ga
}

// buildReport groups candidate rows and findings per GA and pool; ga, when
// set, keeps only that GA.
func buildReport(candidates []hap.Candidate, findings []hap.Finding, ga string) Report {
	drift, other := driftByBinding(candidates, findings, ga)
	return Report{Groups: groupCandidates(candidates, ga, drift), Other: other}
}

// driftByBinding sorts the findings: the kinds of those on a candidate
// binding of ga's (every GA's when ga is ""), by binding, and the others.
func driftByBinding(candidates []hap.Candidate, findings []hap.Finding, ga string) (drift map[string][]string, other []hap.Finding) {
	drift = map[string][]string{}
	candidateNames := map[string]bool{}
	for _, c := range candidates {
		if ga == "" || c.GlobalAccountID == ga {
			candidateNames[c.BindingName] = true
		}
	}
	// A finding belongs to the row of its binding whatever GA it names (a
	// cross-tenant finding names the foreign GA); the GA filter applies to
	// the rows, and to findings about bindings that are no candidates.
	for _, f := range findings {
		if candidateNames[f.BindingName] {
			drift[f.BindingName] = append(drift[f.BindingName], string(f.Kind))
			continue
		}
		if ga == "" || f.GlobalAccountID == ga {
			other = append(other, f)
		}
	}
	return drift, other
}

// groupCandidates groups ga's candidates (every GA's when ga is "") by GA
// and pool, each group's rows by rank with their drift, and what
// provisioning would do in each, sorted by GA and pool.
func groupCandidates(candidates []hap.Candidate, ga string, drift map[string][]string) []ReportGroup {
	type key struct {
		ga   string
		pool hap.Pool
	}
	groups := map[key]*ReportGroup{}
	members := map[key][]hap.Candidate{}
	var order []key
	for _, c := range candidates {
		if ga != "" && c.GlobalAccountID != ga {
			continue
		}
		k := key{c.GlobalAccountID, c.Pool}
		g, ok := groups[k]
		if !ok {
			g = &ReportGroup{GlobalAccountID: c.GlobalAccountID, HyperscalerType: c.Pool.HyperscalerType, EUAccess: c.Pool.EUAccess}
			groups[k] = g
			order = append(order, k)
		}
		members[k] = append(members[k], c)
		g.Rows = append(g.Rows, ReportRow{
			Binding: c.BindingName, DBCount: c.DBCount, ShootCount: c.ShootCount, EffectiveCount: c.EffectiveCount,
			Limit: c.Limit, Headroom: c.Headroom, Rank: c.Rank, Selectable: c.Selectable, Drift: drift[c.BindingName],
		})
	}
	var out []ReportGroup
	for _, k := range order {
		g := groups[k]
		choice := hap.Choose(members[k])
		g.Next, g.ClaimNew, g.Guarded = choice.Binding, choice.ClaimNew, choice.Guarded
		if devs := hap.RankOneDeviations(members[k]); len(devs) > 0 {
			g.KEBChoice, g.Deviation = devs[0].KEB.String(), devs[0].Reason
		}
		slices.SortFunc(g.Rows, func(a, b ReportRow) int { return cmp.Compare(a.Rank, b.Rank) })
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b ReportGroup) int {
		return cmp.Or(cmp.Compare(a.GlobalAccountID, b.GlobalAccountID), cmp.Compare(a.HyperscalerType, b.HyperscalerType),
			compareBools(a.EUAccess, b.EUAccess))
	})
	return out
}

func compareBools(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

// WriteTable prints the report as `hap-reconciler report` shows it: one
// table of the candidate bindings per GA and pool, then the drift on
// bindings that are no candidates. Wide adds the effective count the rank
// is computed from.
func (rep Report) WriteTable(out io.Writer, l Layout) error {
	if rep.ComputedAt.IsZero() {
		l.note(out, "Candidate table (%s, never written: no candidates run has succeeded against this schema yet)\n\n", rep.Source)
	} else {
		l.note(out, "Candidate table (%s, computed %s)\n\n", rep.Source, rep.ComputedAt.UTC().Format(time.RFC3339))
	}
	t := newTable(out, l, column{header: headerGlobalAccount}, column{header: headerPool}, column{header: "NEXT"}, column{header: "KEB'S OWN CHOICE"},
		column{header: "BINDING"}, column{header: "RANK"}, column{header: "DB"}, column{header: "SHOOTS"}, column{header: "EFFECTIVE", wide: true},
		column{header: "LIMIT"}, column{header: "HEADROOM"}, column{header: "SELECTABLE"}, column{header: "DRIFT"})
	for _, g := range rep.Groups {
		ga, pool, next, keb := groupCells(g)
		for i, r := range g.Rows {
			if i > 0 {
				ga, pool, next, keb = "", "", "", ""
			}
			t.row(ga, pool, next, keb, r.Binding, strconv.Itoa(r.Rank), strconv.Itoa(r.DBCount), strconv.Itoa(r.ShootCount),
				strconv.Itoa(r.EffectiveCount), optionalInt(r.Limit), optionalInt(r.Headroom), strconv.FormatBool(r.Selectable),
				dashIfEmpty(strings.Join(r.Drift, ",")))
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, g := range rep.Groups {
		if g.Deviation != "" {
			l.note(out, "\nGA %s, pool %s: rank 1 differs from KEB's own choice: %s\n", g.GlobalAccountID, g.HyperscalerType, g.Deviation)
		}
	}
	if rep.Shadow != nil {
		l.note(out, "\nKEB's own picks against the table: %s\n", rep.Shadow.Summary())
	}
	return writeOtherDrift(out, l, rep.Other)
}

// groupCells are the cells a group's first row starts with: the GA, the
// pool, what provisioning does next and KEB's own choice.
func groupCells(g ReportGroup) (ga, pool, next, keb string) {
	ga, pool, next, keb = g.GlobalAccountID, g.HyperscalerType, g.Next, "same"
	if ga == "" {
		ga = "(shared)"
	}
	if g.EUAccess {
		pool += " (eu)"
	}
	switch {
	case g.Guarded:
		next = "GUARDED"
	case g.ClaimNew:
		next = "CLAIM NEW"
	}
	if g.KEBChoice != "" {
		keb = g.KEBChoice
	}
	return ga, pool, next, keb
}

// writeOtherDrift writes the findings on bindings that are no candidates,
// when there are any.
func writeOtherDrift(out io.Writer, l Layout, other []hap.Finding) error {
	if len(other) == 0 {
		return nil
	}
	l.note(out, "\nDrift on bindings that are no candidates\n\n")
	t := newTable(out, l, column{header: "BINDING"}, column{header: "KIND"}, column{header: headerGlobalAccount}, column{header: "DB"},
		column{header: "SHOOTS"}, column{header: "DETAIL"})
	for _, f := range other {
		t.row(f.BindingName, string(f.Kind), dashIfEmpty(f.GlobalAccountID), strconv.Itoa(f.DBCount), strconv.Itoa(f.ShootCount), f.Detail)
	}
	return t.flush()
}

func optionalInt(v *int) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(*v)
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
