package db

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

type poolHistoryRow struct {
	RecordedAt      time.Time `gorm:"column:recorded_at"`
	HyperscalerType string    `gorm:"column:hyperscaler_type"`
	EUAccess        bool      `gorm:"column:eu_access"`
	Free            int       `gorm:"column:free"`
	Claimed         int       `gorm:"column:claimed"`
}

// RecordPoolSamples appends one sample per dedicated pool of stats, taken
// at, and drops samples older than retention, in one transaction. A second
// record at the same instant replaces the first.
func (s *Store) RecordPoolSamples(ctx context.Context, at time.Time, stats []hap.PoolStats, retention time.Duration) error {
	if at.IsZero() || retention <= 0 {
		return fmt.Errorf("record pool samples: time %s and retention %s must be set", at, retention)
	}
	var rows []poolHistoryRow
	for _, p := range stats {
		if p.Shared {
			continue
		}
		rows = append(rows, poolHistoryRow{RecordedAt: at, HyperscalerType: p.HyperscalerType, EUAccess: p.EUAccess, Free: p.Free, Claimed: p.Claimed})
	}
	table := s.table("pool_history")
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if len(rows) > 0 {
			err := tx.Table(table).Clauses(clause.OnConflict{
				Columns:   []clause.Column{{Name: "hyperscaler_type"}, {Name: "eu_access"}, {Name: "recorded_at"}},
				DoUpdates: clause.AssignmentColumns([]string{"free", "claimed"}),
			}).CreateInBatches(&rows, batchSize).Error
			if err != nil {
				return fmt.Errorf("insert: %w", err)
			}
		}
		if err := tx.Exec("DELETE FROM "+table+" WHERE recorded_at < ?", at.Add(-retention)).Error; err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		return nil
	})
	return s.wrap("record pool history", err)
}

// PoolHistory returns the samples recorded since, per pool, oldest first.
func (s *Store) PoolHistory(ctx context.Context, since time.Time) (_ map[hap.Pool][]hap.PoolSample, err error) {
	defer func() { err = explain(err, s.schema) }()
	var rows []poolHistoryRow
	err = s.db.WithContext(ctx).Table(s.table("pool_history")).
		Where("recorded_at >= ?", since).Order("recorded_at").Find(&rows).Error
	if err != nil {
		return nil, s.wrap("read pool history", err)
	}
	out := map[hap.Pool][]hap.PoolSample{}
	for _, r := range rows {
		p := hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess}
		out[p] = append(out[p], hap.PoolSample{At: r.RecordedAt, Free: r.Free, Claimed: r.Claimed})
	}
	return out, nil
}
