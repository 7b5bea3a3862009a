package db

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

type driftRow struct {
	ID              int64      `gorm:"column:id;primaryKey;autoIncrement"`
	BindingName     string     `gorm:"column:binding_name"`
	GlobalAccountID string     `gorm:"column:global_account_id"`
	HyperscalerType string     `gorm:"column:hyperscaler_type"`
	EUAccess        bool       `gorm:"column:eu_access"`
	Kind            string     `gorm:"column:kind"`
	DBCount         int        `gorm:"column:db_count"`
	ShootCount      int        `gorm:"column:shoot_count"`
	DeletingShoots  int        `gorm:"column:deleting_shoots"`
	Detail          string     `gorm:"column:detail"`
	FirstSeen       time.Time  `gorm:"column:first_seen"`
	LastSeen        time.Time  `gorm:"column:last_seen"`
	ResolvedAt      *time.Time `gorm:"column:resolved_at"`
}

var (
	//go:embed sql/drift_open.sql
	driftOpen string
	//go:embed sql/drift_upsert.sql
	driftUpsert string
	//go:embed sql/drift_resolve.sql
	driftResolve string
	//go:embed sql/drift_open_of.sql
	driftOpenOf string
)

// findingKey identifies a finding across runs.
type findingKey struct {
	binding, kind, ga string
}

func (r driftRow) key() findingKey { return findingKey{r.BindingName, r.Kind, r.GlobalAccountID} }

// RecordFindings stores the findings of one run, in one transaction: a
// finding already open keeps its first_seen and gets this run's counts and
// last_seen; a new one is opened; an open one this run did not produce is
// resolved at now. It returns the findings it opened and those it resolved.
func (s *Store) RecordFindings(ctx context.Context, findings []hap.Finding, now time.Time) (hap.DriftChanges, error) {
	rows, err := driftRows(findings, now)
	if err != nil {
		return hap.DriftChanges{}, err
	}
	var changes hap.DriftChanges
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		changes = hap.DriftChanges{}
		var open []driftRow
		if err := tx.Raw(s.sql(driftOpen)).Scan(&open).Error; err != nil {
			return fmt.Errorf("read open findings: %w", err)
		}
		current := make(map[findingKey]bool, len(rows))
		for _, r := range rows {
			current[r.key()] = true
		}
		stillOpen := make(map[findingKey]bool, len(open))
		var gone []int64
		for _, o := range open {
			stillOpen[o.key()] = true
			if !current[o.key()] {
				gone = append(gone, o.ID)
				changes.Resolved = append(changes.Resolved, o.openFinding())
			}
		}
		for i, r := range rows {
			if !stillOpen[r.key()] {
				changes.Opened = append(changes.Opened, findings[i])
			}
		}
		if err := s.upsertFindings(tx, rows); err != nil {
			return err
		}
		if len(gone) > 0 {
			if err := tx.Exec(s.sql(driftResolve), params{"ids": jsonList(gone), "now": now}).Error; err != nil {
				return fmt.Errorf("resolve findings: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return hap.DriftChanges{}, s.wrap("record findings", err)
	}
	return changes, nil
}

// upsertFindings inserts new findings and refreshes open ones. The conflict
// target is the partial unique index over open findings, so a resolved
// finding that comes back opens a new row and its history stays.
func (s *Store) upsertFindings(tx *gorm.DB, rows []driftRow) error {
	if len(rows) == 0 {
		return nil
	}
	values, err := rowsJSON(rows)
	if err != nil {
		return err
	}
	if err := tx.Exec(s.sql(driftUpsert), params{"rows": values}).Error; err != nil {
		return fmt.Errorf("upsert findings: %w", err)
	}
	return nil
}

// driftRows checks the findings: each needs a binding and a kind, and no
// two may share (binding, kind, GA), which would make the upsert touch a
// row twice.
func driftRows(findings []hap.Finding, now time.Time) ([]driftRow, error) {
	rows := make([]driftRow, 0, len(findings))
	seen := make(map[findingKey]bool, len(findings))
	for i, f := range findings {
		if f.BindingName == "" {
			return nil, fmt.Errorf("finding %d (kind %q): binding name is empty", i, f.Kind)
		}
		if f.Kind == "" {
			return nil, fmt.Errorf("finding %d (binding %q): kind is empty", i, f.BindingName)
		}
		r := driftRow{
			BindingName:     f.BindingName,
			GlobalAccountID: f.GlobalAccountID,
			HyperscalerType: f.Pool.HyperscalerType,
			EUAccess:        f.Pool.EUAccess,
			Kind:            string(f.Kind),
			DBCount:         f.DBCount,
			ShootCount:      f.ShootCount,
			DeletingShoots:  f.DeletingShoots,
			Detail:          f.Detail,
			FirstSeen:       now,
			LastSeen:        now,
		}
		if seen[r.key()] {
			return nil, fmt.Errorf("finding %d: binding %q, kind %q, global account %q appears twice",
				i, f.BindingName, f.Kind, f.GlobalAccountID)
		}
		seen[r.key()] = true
		rows = append(rows, r)
	}
	return rows, nil
}

// OpenFindings lists the open findings about ga, or about every GA with
// hap.AllGlobalAccounts.
func (s *Store) OpenFindings(ctx context.Context, ga string) (_ []hap.OpenFinding, err error) {
	defer func() { err = explain(err, s.schema) }()
	var rows []driftRow
	err = s.db.WithContext(ctx).Raw(s.sql(driftOpenOf), params{"all": ga == hap.AllGlobalAccounts, "ga": ga}).Scan(&rows).Error
	if err != nil {
		return nil, s.wrap("read open findings", err)
	}
	out := make([]hap.OpenFinding, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.openFinding())
	}
	return out, nil
}

// openFinding is the finding a row records, with when it was seen.
func (r driftRow) openFinding() hap.OpenFinding {
	return hap.OpenFinding{
		Finding: hap.Finding{
			BindingName:     r.BindingName,
			GlobalAccountID: r.GlobalAccountID,
			Pool:            hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess},
			Kind:            hap.FindingKind(r.Kind),
			DBCount:         r.DBCount,
			ShootCount:      r.ShootCount,
			DeletingShoots:  r.DeletingShoots,
			Detail:          r.Detail,
		},
		FirstSeen: r.FirstSeen,
		LastSeen:  r.LastSeen,
	}
}
