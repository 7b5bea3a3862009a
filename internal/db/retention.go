package db

import (
	"context"
	_ "embed"
	"fmt"

	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

var (
	//go:embed sql/prune_binding_drift.sql
	pruneBindingDrift string
	//go:embed sql/prune_binding_releases.sql
	pruneBindingReleases string
	//go:embed sql/prune_claim_leases.sql
	pruneClaimLeases string
	//go:embed sql/prune_shadow_picks.sql
	pruneShadowPicks string
	//go:embed sql/prune_candidate_history.sql
	pruneCandidateHistory string
	//go:embed sql/prune_candidate_rewrites.sql
	pruneCandidateRewrites string
	//go:embed sql/prune_pool_history.sql
	prunePoolHistory string
	//go:embed sql/table_rows.sql
	tableRows string
)

// PruneTables forgets, table by table, the rows older than keep that
// nothing reads any more: resolved findings, settled release audit, the
// pools' samples, the shadow history, expired claim leases. Each statement keeps what is still
// needed (an open finding, an open release intent, the candidate table's
// current versions and newest rewrite, a lease not yet expired); why each
// is safe is in docs/operations.md#what-the-tables-hold.
func (s *Store) PruneTables(ctx context.Context, keep hap.Retention) error {
	if keep.ResolvedFindings <= 0 || keep.ReleaseAudit <= 0 || keep.ShadowHistory <= 0 || keep.PoolHistory <= 0 {
		return fmt.Errorf("prune tables: every retention must be positive: %+v", keep)
	}
	open, err := s.OpenReleaseIntents(ctx)
	if err != nil {
		return err
	}
	ids := make([]int64, len(open))
	for i, o := range open {
		ids[i] = o.ID
	}
	db := s.db.WithContext(ctx)
	for _, p := range []struct {
		table, statement string
		params           params
	}{
		{"binding_drift", pruneBindingDrift, params{"keep": keep.ResolvedFindings.Seconds()}},
		{"binding_releases", pruneBindingReleases, params{"keep": keep.ReleaseAudit.Seconds(), "open": jsonList(ids)}},
		{"pool_history", prunePoolHistory, params{"keep": keep.PoolHistory.Seconds()}},
		{"claim_leases", pruneClaimLeases, nil},
	} {
		if err := execNamed(db, s.sql(p.statement), p.params); err != nil {
			return s.wrap("prune "+p.table, err)
		}
	}
	return s.pruneShadowHistory(db, keep.ShadowHistory.Seconds())
}

// pruneShadowHistory forgets the compared picks, the candidate table's
// closed versions and its rewrites older than keep seconds: what only the
// shadow job reads. The candidates job writes the history whether or not
// the shadow job runs, so every run prunes it.
func (s *Store) pruneShadowHistory(db *gorm.DB, keep float64) error {
	for _, p := range []struct{ table, statement string }{
		{"shadow_picks", pruneShadowPicks},
		{"candidate_history", pruneCandidateHistory},
		{"candidate_rewrites", pruneCandidateRewrites},
	} {
		if err := db.Exec(s.sql(p.statement), params{"keep": keep}).Error; err != nil {
			return s.wrap("prune "+p.table, err)
		}
	}
	return nil
}

// execNamed runs statement with its named parameters, if any.
func execNamed(db *gorm.DB, statement string, p params) error {
	if p == nil {
		return db.Exec(statement).Error
	}
	return db.Exec(statement, p).Error
}

// TableRows counts the rows of every table of the job's schema, by name.
func (s *Store) TableRows(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		TableName string `gorm:"column:table_name"`
		TableRows int64  `gorm:"column:table_rows"`
	}
	if err := s.db.WithContext(ctx).Raw(s.sql(tableRows)).Scan(&rows).Error; err != nil {
		return nil, s.wrap("count the rows of the job's tables", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.TableName] = r.TableRows
	}
	return out, nil
}
