package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

type releaseRow struct {
	ID              int64          `gorm:"column:id"`
	BindingName     string         `gorm:"column:binding_name"`
	GlobalAccountID string         `gorm:"column:global_account_id"`
	HyperscalerType string         `gorm:"column:hyperscaler_type"`
	EUAccess        bool           `gorm:"column:eu_access"`
	Mode            string         `gorm:"column:mode"`
	Reason          string         `gorm:"column:reason"`
	DryRun          bool           `gorm:"column:dry_run"`
	Outcome         string         `gorm:"column:outcome"`
	IntentID        sql.NullInt64  `gorm:"column:intent_id"`
	ResourceVersion sql.NullString `gorm:"column:resource_version"`
	CreatedAt       time.Time      `gorm:"column:created_at"`
	// AgeSeconds is filled by OpenReleaseIntents alone: the row's age on
	// the database's clock.
	AgeSeconds float64 `gorm:"column:age_seconds;->"`
}

// RecordRelease appends r to the release history and returns the row's ID.
// The database stamps the row (the column's default, clock_timestamp()):
// r.At is ignored, so the history orders against KEB's own rows whatever
// the job's clock says. An outcome row of an intent that already has one
// is not written and its ID is 0: another run settled the intent first
// (runs overlap for a moment when a database restart ends one's run lock),
// and the first word on an intent stands, every outcome being read from
// evidence that does not change once seen.
func (s *Store) RecordRelease(ctx context.Context, r hap.ReleaseRecord) (int64, error) {
	for _, required := range []struct{ field, value string }{
		{"binding name", r.BindingName},
		{"outcome", r.Outcome},
		{"mode", r.Mode},
	} {
		if required.value == "" {
			return 0, fmt.Errorf("release record of binding %q: %s is empty", r.BindingName, required.field)
		}
	}
	if r.Outcome == hap.OutcomeIntent && r.ResourceVersion == "" {
		return 0, fmt.Errorf("release intent of binding %q: the resourceVersion its update is guarded by is empty", r.BindingName)
	}
	var id int64
	err := s.db.WithContext(ctx).Raw(`INSERT INTO `+s.table("binding_releases")+`
		(binding_name, global_account_id, hyperscaler_type, eu_access, mode, reason, dry_run, outcome, intent_id, resource_version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (intent_id) WHERE intent_id IS NOT NULL DO NOTHING
		RETURNING id`,
		r.BindingName, r.GlobalAccountID, r.Pool.HyperscalerType, r.Pool.EUAccess, r.Mode, r.Reason, r.DryRun, r.Outcome,
		sql.NullInt64{Int64: r.IntentID, Valid: r.IntentID != 0},
		sql.NullString{String: r.ResourceVersion, Valid: r.ResourceVersion != ""}).Scan(&id).Error
	if err == nil && id == 0 && r.IntentID == 0 {
		err = fmt.Errorf("the insert returned no id")
	}
	return id, s.wrap(fmt.Sprintf("record release of binding %q", r.BindingName), err)
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
		ID: r.ID, BindingName: r.BindingName, GlobalAccountID: r.GlobalAccountID,
		Pool: hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess},
		Mode: r.Mode, Reason: r.Reason, DryRun: r.DryRun, Outcome: r.Outcome,
		IntentID: r.IntentID.Int64, ResourceVersion: r.ResourceVersion.String, At: r.CreatedAt,
	}
}
