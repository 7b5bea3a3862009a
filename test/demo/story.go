package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/report"
)

// tellStory points at what the run did with the planted part of the
// landscape: the drift it found, the binding the spread GA's next cluster
// goes to, and what release decided about the idle binding.
func tellStory(ctx context.Context, n narrator, env *app.Env, rep report.Report, databaseURL string) error {
	findings, err := env.Store.OpenFindings(ctx, hap.AllGlobalAccounts)
	if err != nil {
		return err
	}
	n.step("Drift: %d open finding(s) where KEB's database and Gardener disagree, by kind", len(findings))
	var kinds []hap.FindingKind
	bindings := map[hap.FindingKind][]string{}
	for _, f := range findings {
		if len(bindings[f.Kind]) == 0 {
			kinds = append(kinds, f.Kind)
		}
		bindings[f.Kind] = append(bindings[f.Kind], f.BindingName)
	}
	for _, k := range kinds {
		n.note("%-28s %s", k, strings.Join(bindings[k], ", "))
	}

	for _, g := range rep.Groups {
		if g.GlobalAccountID != spreadGA {
			continue
		}
		n.step("Candidates: GA %s holds %d %s bindings; its next cluster goes to %s", g.GlobalAccountID, len(g.Rows), g.HyperscalerType, nextOf(g))
		for _, r := range g.Rows {
			n.note("rank %d  %-14s %s", r.Rank, r.Binding, fill(r))
		}
		n.note("provisioning fills the most populated binding below the limit, so the least populated one can empty and go back to the pool")
	}

	releases, err := readReleases(ctx, databaseURL, env.Store.Schema())
	if err != nil {
		return err
	}
	n.step("Release: %d decision(s) in the audit table %s.binding_releases", len(releases), env.Store.Schema())
	for _, r := range releases {
		n.note("%s %s of GA %s: %s", verb(r.outcome), r.binding, r.ga, r.reason)
	}
	return nil
}

func nextOf(g report.ReportGroup) string {
	if g.ClaimNew {
		return "a binding claimed new from the pool"
	}
	return g.Next
}

func fill(r report.ReportRow) string {
	if r.Limit == nil {
		return fmt.Sprintf("%d clusters, no limit", r.EffectiveCount)
	}
	s := fmt.Sprintf("%d of %d clusters", r.EffectiveCount, *r.Limit)
	if !r.Selectable {
		s += ", full: not picked any more"
	}
	return s
}

func verb(outcome string) string {
	switch outcome {
	case hap.OutcomeWouldRelease:
		return "dry run: would release"
	case hap.OutcomeReleased:
		return "released"
	}
	return strings.ReplaceAll(outcome, "_", " ") + ":"
}

type releaseRow struct{ binding, ga, outcome, reason string }

// readReleases reads what came of each release decision from the audit,
// which the job only appends to.
func readReleases(ctx context.Context, databaseURL, schema string) ([]releaseRow, error) {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return nil, fmt.Errorf("reading the release audit: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Only what came of each decision: the audit may hold bookkeeping rows
	// of the release itself too.
	outcomes := []string{hap.OutcomeWouldRelease, hap.OutcomeReleased, hap.OutcomeConflict, hap.OutcomeAborted}
	rows, err := conn.Query(ctx, "SELECT binding_name, global_account_id, outcome, reason FROM "+
		pgx.Identifier{schema, "binding_releases"}.Sanitize()+" WHERE outcome = ANY($1) ORDER BY id", outcomes)
	if err != nil {
		return nil, fmt.Errorf("reading the release audit: %w", err)
	}
	var out []releaseRow
	for rows.Next() {
		var r releaseRow
		if err := rows.Scan(&r.binding, &r.ga, &r.outcome, &r.reason); err != nil {
			return nil, fmt.Errorf("reading the release audit: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
