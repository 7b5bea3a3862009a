package db

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

type poolHistoryRow struct {
	RecordedAt      time.Time `gorm:"column:recorded_at"`
	HyperscalerType string    `gorm:"column:hyperscaler_type"`
	EUAccess        bool      `gorm:"column:eu_access"`
	Free            int       `gorm:"column:free"`
	Claimed         int       `gorm:"column:claimed"`
}

var (
	//go:embed sql/pool_history_record.sql
	poolHistoryRecord string
	//go:embed sql/pool_history_since.sql
	poolHistorySince string
)

// RecordPoolSamples appends one sample per dedicated pool of stats, taken
// at. A second record at the same instant replaces the first. The
// retention step forgets the old ones (PruneTables).
func (s *Store) RecordPoolSamples(ctx context.Context, at time.Time, stats []hap.PoolStats) error {
	if at.IsZero() {
		return fmt.Errorf("record pool samples: the time must be set")
	}
	var rows []poolHistoryRow
	for _, p := range stats {
		if p.Shared {
			continue
		}
		rows = append(rows, poolHistoryRow{RecordedAt: at, HyperscalerType: p.HyperscalerType, EUAccess: p.EUAccess, Free: p.Free, Claimed: p.Claimed})
	}
	values, err := rowsJSON(rows)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	err = s.db.WithContext(ctx).Exec(s.sql(poolHistoryRecord), params{"rows": values}).Error
	return s.wrap("record pool history", err)
}

// PoolHistory returns the samples recorded since, per pool, oldest first.
func (s *Store) PoolHistory(ctx context.Context, since time.Time) (_ map[hap.Pool][]hap.PoolSample, err error) {
	defer func() { err = explain(err, s.schema) }()
	var rows []poolHistoryRow
	err = s.db.WithContext(ctx).Raw(s.sql(poolHistorySince), params{"since": since}).Scan(&rows).Error
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
