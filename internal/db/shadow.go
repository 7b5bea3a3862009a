package db

import (
	"context"
	"database/sql"
	_ "embed"
	"slices"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

var (
	//go:embed sql/kebs_events_readable.sql
	kebsEventsReadable string
	//go:embed sql/shadow_placed_instances.sql
	shadowPlacedInstances string
	//go:embed sql/shadow_resolve_step.sql
	shadowResolveStep string
	//go:embed sql/shadow_without_resolve_step.sql
	shadowWithoutResolveStep string
	//go:embed sql/candidate_rewrites_since.sql
	candidateRewritesSince string
	//go:embed sql/candidate_history_of.sql
	candidateHistoryOf string
	//go:embed sql/shadow_picks_record.sql
	shadowPicksRecord string
	//go:embed sql/shadow_picks_since.sql
	shadowPicksSince string
)

// placedRow is an instance KEB placed, as shadow_placed_instances.sql
// reads it.
type placedRow struct {
	InstanceID      string       `gorm:"column:instance_id"`
	GlobalAccountID string       `gorm:"column:global_account_id"`
	BindingName     string       `gorm:"column:binding_name"`
	CreatedAt       time.Time    `gorm:"column:created_at"`
	ResolvedAt      sql.NullTime `gorm:"column:resolved_at"`
	Compared        bool         `gorm:"column:compared"`
}

// ShadowInputs reads KEB's picks since `since` and the candidate table's
// rewrites over that time. Picks in the maxAge before it come along as
// already compared: the table would have reserved for them, and that shapes
// its answers to the picks after. A pick is timed by KEB's resolve step
// where KEB's events say when it ran, by the provision request otherwise
// (KEB's events disabled or pruned, or not readable to the job's role).
func (s *Store) ShadowInputs(ctx context.Context, since time.Time, maxAge time.Duration) (hap.ShadowInput, error) {
	var in hap.ShadowInput
	db := s.db.WithContext(ctx)
	from := since.Add(-maxAge)
	if err := db.Raw(s.sql(kebsEventsReadable)).Scan(&in.EventsReadable).Error; err != nil {
		return in, s.wrap("look up whether KEB's events can be read", err)
	}
	resolved := shadowWithoutResolveStep
	if in.EventsReadable {
		resolved = shadowResolveStep
	}
	statement := s.sql(shadowPlacedInstances, "{{resolved}}", s.sql(resolved))
	err := streamRows(db, statement, []any{params{"since": from}}, func(r placedRow) error {
		p := hap.PlacedInstance{InstanceID: r.InstanceID, GlobalAccountID: r.GlobalAccountID, BindingName: r.BindingName, At: r.CreatedAt}
		if r.ResolvedAt.Valid {
			// KEB's clock wrote the event, the database's the row: a
			// skew never puts the pick before the request.
			p.At, p.ByResolveStep = later(p.At, r.ResolvedAt.Time), true
		}
		p.Compared = r.Compared || p.At.Before(since)
		in.Placed = append(in.Placed, p)
		return nil
	})
	if err != nil {
		return in, s.wrap("read KEB's placed instances", err)
	}

	var rewrites []struct {
		WrittenAt  time.Time `gorm:"column:written_at"`
		SnapshotAt time.Time `gorm:"column:snapshot_at"`
	}
	if err := db.Raw(s.sql(candidateRewritesSince), params{"from": from}).Scan(&rewrites).Error; err != nil {
		return in, s.wrap("read the candidate table's rewrites", err)
	}
	for _, r := range rewrites {
		in.Rewrites = append(in.Rewrites, hap.Rewrite{WrittenAt: r.WrittenAt, SnapshotAt: r.SnapshotAt})
	}
	return in, nil
}

// CandidateVersions reads the candidate table's rows of groups as they
// stood from `from` on: every version still held then or written since.
// The query narrows to the groups' GAs and the pools are matched here, as
// the rows stream in: no more than the groups' rows is ever held.
func (s *Store) CandidateVersions(ctx context.Context, from time.Time, groups []hap.ShadowGroup) ([]hap.CandidateVersion, error) {
	wanted := make(map[hap.ShadowGroup]bool, len(groups))
	var gas []string
	for _, g := range groups {
		if !wanted[g] {
			wanted[g] = true
			gas = append(gas, g.GlobalAccountID)
		}
	}
	slices.Sort(gas)
	gas = slices.Compact(gas)
	var out []hap.CandidateVersion
	err := streamRows(s.db.WithContext(ctx), s.sql(candidateHistoryOf), []any{params{"from": from, "gas": jsonList(gas)}}, func(r historyRow) error {
		if v := r.version(); wanted[hap.ShadowGroup{GlobalAccountID: v.GlobalAccountID, Pool: v.Pool}] {
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, s.wrap("read the candidate history", err)
	}
	return out, nil
}

type shadowRow struct {
	InstanceID      string     `gorm:"column:instance_id"`
	GlobalAccountID string     `gorm:"column:global_account_id"`
	HyperscalerType string     `gorm:"column:hyperscaler_type"`
	EUAccess        bool       `gorm:"column:eu_access"`
	KEBBinding      string     `gorm:"column:keb_binding"`
	TableAnswer     string     `gorm:"column:table_answer"`
	Outcome         string     `gorm:"column:outcome"`
	Detail          string     `gorm:"column:detail"`
	PickedAt        time.Time  `gorm:"column:picked_at"`
	SnapshotAt      *time.Time `gorm:"column:snapshot_at"`
}

// RecordShadow keeps each compared pick once. The retention step forgets
// them, with the history that only served them (PruneTables), whichever
// jobs run.
func (s *Store) RecordShadow(ctx context.Context, results []hap.ShadowResult) error {
	db := s.db.WithContext(ctx)
	if len(results) > 0 {
		rows := make([]shadowRow, len(results))
		for i, r := range results {
			rows[i] = shadowRow{InstanceID: r.InstanceID, GlobalAccountID: r.GlobalAccountID, HyperscalerType: r.Pool.HyperscalerType,
				EUAccess: r.Pool.EUAccess, KEBBinding: r.KEBBinding, TableAnswer: r.Table, Outcome: r.Outcome, Detail: r.Detail, PickedAt: r.At}
			if !r.SnapshotAt.IsZero() {
				at := r.SnapshotAt
				rows[i].SnapshotAt = &at
			}
		}
		values, err := rowsJSON(rows)
		if err != nil {
			return err
		}
		if err := db.Exec(s.sql(shadowPicksRecord), params{"rows": values}).Error; err != nil {
			return s.wrap("record compared picks", err)
		}
	}
	return nil
}

// ShadowPicks returns the picks compared since `since`, oldest first.
func (s *Store) ShadowPicks(ctx context.Context, since time.Time) (_ []hap.ShadowResult, err error) {
	defer func() { err = explain(err, s.schema) }()
	var rows []shadowRow
	if err := s.db.WithContext(ctx).Raw(s.sql(shadowPicksSince), params{"since": since}).Scan(&rows).Error; err != nil {
		return nil, s.wrap("read compared picks", err)
	}
	out := make([]hap.ShadowResult, len(rows))
	for i, r := range rows {
		out[i] = hap.ShadowResult{InstanceID: r.InstanceID, GlobalAccountID: r.GlobalAccountID,
			Pool: hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess}, KEBBinding: r.KEBBinding, Table: r.TableAnswer,
			Outcome: r.Outcome, Detail: r.Detail, At: r.PickedAt}
		if r.SnapshotAt != nil {
			out[i].SnapshotAt = *r.SnapshotAt
		}
	}
	return out, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
