package db

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

var (
	//go:embed sql/release_record.sql
	releaseRecord string
	//go:embed sql/release_history.sql
	releaseHistory string
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
	err := s.db.WithContext(ctx).Raw(s.sql(releaseRecord), params{
		"binding_name": r.BindingName, "global_account_id": r.GlobalAccountID, "hyperscaler_type": r.Pool.HyperscalerType,
		"eu_access": r.Pool.EUAccess, "mode": r.Mode, "reason": r.Reason, "dry_run": r.DryRun, "outcome": r.Outcome,
		"intent_id":        sql.NullInt64{Int64: r.IntentID, Valid: r.IntentID != 0},
		"resource_version": sql.NullString{String: r.ResourceVersion, Valid: r.ResourceVersion != ""},
	}).Scan(&id).Error
	if err == nil && id == 0 && r.IntentID == 0 {
		err = fmt.Errorf("the insert returned no id")
	}
	return id, s.wrap(fmt.Sprintf("record release of binding %q", r.BindingName), err)
}

// ReleaseHistory returns every row of the release history, oldest first:
// decisions, intents and outcomes.
func (s *Store) ReleaseHistory(ctx context.Context) ([]hap.ReleaseRecord, error) {
	var rows []releaseRow
	if err := s.db.WithContext(ctx).Raw(s.sql(releaseHistory)).Scan(&rows).Error; err != nil {
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
