package db

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/hap"
)

type candidateRow struct {
	BindingName     string    `gorm:"column:binding_name"`
	GlobalAccountID string    `gorm:"column:global_account_id"`
	HyperscalerType string    `gorm:"column:hyperscaler_type"`
	EUAccess        bool      `gorm:"column:eu_access"`
	DBCount         int       `gorm:"column:db_count"`
	ShootCount      int       `gorm:"column:shoot_count"`
	EffectiveCount  int       `gorm:"column:effective_count"`
	ClusterLimit    *int      `gorm:"column:cluster_limit"`
	Headroom        *int      `gorm:"column:headroom"`
	Selectable      bool      `gorm:"column:selectable"`
	Guarded         bool      `gorm:"column:guarded"`
	Rank            int       `gorm:"column:rank"`
	Reserved        int       `gorm:"column:reserved"`
	ComputedAt      time.Time `gorm:"column:computed_at"`
}

// CandidateRow is a row of the candidate table as reports show it.
type CandidateRow = hap.StoredCandidate

// ReplaceCandidates rewrites the candidate table with rows, computed from a
// snapshot whose reservations absorbed lists (see ReadInstanceCounts).
//
// Provisioning reads and updates this table at any time, so the rewrite is
// one transaction, and it starts by locking the table in SHARE ROW
// EXCLUSIVE mode. That mode lets plain SELECTs through (they keep seeing
// the old table until the commit, then the new one: never a half-written
// one) but conflicts with the ROW EXCLUSIVE lock a pick's UPDATE takes. So
// a pick either committed before the lock was granted, and its reservation
// is counted below, or it waits and then works on the new rows with a fresh
// snapshot. Either way no reservation is lost or counted twice.
//
// Within the lock it drops the reservations the snapshot absorbed and those
// older than reservationTTL (an instance KEB never wrote), replaces every
// row, and sets reserved from the reservations that remain.
func (s *Store) ReplaceCandidates(ctx context.Context, rows []hap.Candidate, absorbed []string, computedAt time.Time, reservationTTL time.Duration) error {
	if reservationTTL <= 0 {
		return fmt.Errorf("reservation TTL %s: must be positive", reservationTTL)
	}
	newRows, err := candidateRows(rows, computedAt)
	if err != nil {
		return err
	}
	candidates, reservations := s.table("binding_candidates"), s.table("binding_reservations")
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("LOCK TABLE " + candidates + " IN SHARE ROW EXCLUSIVE MODE").Error; err != nil {
			return fmt.Errorf("lock candidates: %w", err)
		}
		for start := 0; start < len(absorbed); start += batchSize {
			ids := absorbed[start:min(start+batchSize, len(absorbed))]
			if err := tx.Exec("DELETE FROM "+reservations+" WHERE instance_id IN ?", ids).Error; err != nil {
				return fmt.Errorf("drop absorbed reservations: %w", err)
			}
		}
		if err := tx.Exec("DELETE FROM "+reservations+" WHERE reserved_at < now() - make_interval(secs => ?)",
			reservationTTL.Seconds()).Error; err != nil {
			return fmt.Errorf("drop expired reservations: %w", err)
		}
		if err := tx.Exec("DELETE FROM " + candidates).Error; err != nil {
			return fmt.Errorf("clear candidates: %w", err)
		}
		if len(newRows) > 0 {
			if err := tx.Table(candidates).CreateInBatches(&newRows, batchSize).Error; err != nil {
				return fmt.Errorf("insert candidates: %w", err)
			}
		}
		if err := tx.Exec(`UPDATE ` + candidates + ` c SET reserved = r.n
			FROM (SELECT binding_name, count(*) AS n FROM ` + reservations + ` GROUP BY binding_name) r
			WHERE c.binding_name = r.binding_name`).Error; err != nil {
			return fmt.Errorf("count reservations: %w", err)
		}
		return nil
	})
	return s.wrap("replace candidates", err)
}

// candidateRows refuses rows the pick could misread: no binding, no pool,
// or one binding twice.
func candidateRows(rows []hap.Candidate, computedAt time.Time) ([]candidateRow, error) {
	out := make([]candidateRow, 0, len(rows))
	seen := make(map[string]bool, len(rows))
	for i, c := range rows {
		if c.BindingName == "" {
			return nil, fmt.Errorf("candidate %d: binding name is empty", i)
		}
		if c.Pool.HyperscalerType == "" {
			return nil, fmt.Errorf("candidate %d (binding %q): hyperscaler type is empty", i, c.BindingName)
		}
		if seen[c.BindingName] {
			return nil, fmt.Errorf("candidate %d: binding %q appears twice", i, c.BindingName)
		}
		seen[c.BindingName] = true
		out = append(out, candidateRow{
			BindingName:     c.BindingName,
			GlobalAccountID: c.GlobalAccountID,
			HyperscalerType: c.Pool.HyperscalerType,
			EUAccess:        c.Pool.EUAccess,
			DBCount:         c.DBCount,
			ShootCount:      c.ShootCount,
			EffectiveCount:  c.EffectiveCount,
			ClusterLimit:    c.Limit,
			Headroom:        c.Headroom,
			Selectable:      c.Selectable,
			Guarded:         c.Guarded,
			Rank:            c.Rank,
			ComputedAt:      computedAt,
		})
	}
	return out, nil
}

// Candidates lists the candidate rows of ga ("" is the shared pools), or of
// every GA with AllGlobalAccounts, in pick order within each pool.
func (s *Store) Candidates(ctx context.Context, ga string) ([]CandidateRow, error) {
	var rows []candidateRow
	q := s.db.WithContext(ctx).Table(s.table("binding_candidates"))
	if ga != AllGlobalAccounts {
		q = q.Where("global_account_id = ?", ga)
	}
	// Byte order, as the decisions compare names, whatever the collation.
	if err := q.Order(`global_account_id COLLATE "C", hyperscaler_type COLLATE "C", eu_access, rank, binding_name COLLATE "C"`).Find(&rows).Error; err != nil {
		return nil, s.wrap("read candidates", err)
	}
	out := make([]CandidateRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, CandidateRow{
			Candidate: hap.Candidate{
				GlobalAccountID: r.GlobalAccountID,
				Pool:            hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess},
				BindingName:     r.BindingName,
				DBCount:         r.DBCount,
				ShootCount:      r.ShootCount,
				EffectiveCount:  r.EffectiveCount,
				Limit:           r.ClusterLimit,
				Headroom:        r.Headroom,
				Selectable:      r.Selectable,
				Guarded:         r.Guarded,
				Rank:            r.Rank,
			},
			Reserved:   r.Reserved,
			ComputedAt: r.ComputedAt,
		})
	}
	return out, nil
}
