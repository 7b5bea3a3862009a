package db

import (
	"context"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

type releaseRow struct {
	ID              int64     `gorm:"column:id;primaryKey;autoIncrement"`
	BindingName     string    `gorm:"column:binding_name"`
	GlobalAccountID string    `gorm:"column:global_account_id"`
	HyperscalerType string    `gorm:"column:hyperscaler_type"`
	EUAccess        bool      `gorm:"column:eu_access"`
	Mode            string    `gorm:"column:mode"`
	Reason          string    `gorm:"column:reason"`
	DryRun          bool      `gorm:"column:dry_run"`
	Outcome         string    `gorm:"column:outcome"`
	CreatedAt       time.Time `gorm:"column:created_at;autoCreateTime:false"`
}

// RecordRelease appends r to the release history.
func (s *Store) RecordRelease(ctx context.Context, r hap.ReleaseRecord) error {
	for _, required := range []struct{ field, value string }{
		{"binding name", r.BindingName},
		{"outcome", r.Outcome},
		{"mode", r.Mode},
	} {
		if required.value == "" {
			return fmt.Errorf("release record of binding %q: %s is empty", r.BindingName, required.field)
		}
	}
	if r.At.IsZero() {
		return fmt.Errorf("release record of binding %q: time is not set", r.BindingName)
	}
	row := releaseRow{
		BindingName:     r.BindingName,
		GlobalAccountID: r.GlobalAccountID,
		HyperscalerType: r.Pool.HyperscalerType,
		EUAccess:        r.Pool.EUAccess,
		Mode:            r.Mode,
		Reason:          r.Reason,
		DryRun:          r.DryRun,
		Outcome:         r.Outcome,
		CreatedAt:       r.At,
	}
	err := s.db.WithContext(ctx).Table(s.table("binding_releases")).Create(&row).Error
	return s.wrap(fmt.Sprintf("record release of binding %q", r.BindingName), err)
}

// ReleaseHistory returns every row of the release history, oldest first:
// decisions, intents and outcomes.
func (s *Store) ReleaseHistory(ctx context.Context) ([]hap.ReleaseRecord, error) {
	var rows []releaseRow
	if err := s.db.WithContext(ctx).Table(s.table("binding_releases")).Order("id").Find(&rows).Error; err != nil {
		return nil, s.wrap("read the release history", err)
	}
	out := make([]hap.ReleaseRecord, len(rows))
	for i, r := range rows {
		out[i] = r.record()
	}
	return out, nil
}

func (r releaseRow) record() hap.ReleaseRecord {
	return hap.ReleaseRecord{
		BindingName: r.BindingName, GlobalAccountID: r.GlobalAccountID,
		Pool: hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess},
		Mode: r.Mode, Reason: r.Reason, DryRun: r.DryRun, Outcome: r.Outcome, At: r.CreatedAt,
	}
}
