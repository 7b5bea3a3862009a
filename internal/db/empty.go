package db

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

type emptySinceRow struct {
	BindingName     string    `gorm:"column:binding_name"`
	GlobalAccountID string    `gorm:"column:global_account_id"`
	EmptySince      time.Time `gorm:"column:empty_since"`
	// last_seen is left to its column default, the database's now().
}

var (
	//go:embed sql/empty_since_all.sql
	emptySinceAll string
	//go:embed sql/empty_since_clear.sql
	emptySinceClear string
	//go:embed sql/empty_since_insert.sql
	emptySinceInsert string
)

// EmptySince returns since when each binding has been seen empty, by name.
func (s *Store) EmptySince(ctx context.Context) (map[string]hap.EmptySighting, error) {
	var rows []emptySinceRow
	if err := s.db.WithContext(ctx).Raw(s.sql(emptySinceAll)).Scan(&rows).Error; err != nil {
		return nil, s.wrap("read empty bindings", err)
	}
	out := make(map[string]hap.EmptySighting, len(rows))
	for _, r := range rows {
		out[r.BindingName] = hap.EmptySighting{GlobalAccountID: r.GlobalAccountID, Since: r.EmptySince}
	}
	return out, nil
}

// SaveEmptySince replaces the whole set of empty bindings, keyed by binding
// name, in one transaction: a binding missing from sightings is no longer
// empty, and its clock starts over when it is next seen empty.
func (s *Store) SaveEmptySince(ctx context.Context, sightings map[string]hap.EmptySighting) error {
	rows := make([]emptySinceRow, 0, len(sightings))
	for name, e := range sightings {
		if name == "" {
			return fmt.Errorf("empty binding sighting of global account %q has no binding name", e.GlobalAccountID)
		}
		if e.Since.IsZero() {
			return fmt.Errorf("empty binding %q: empty-since time is not set", name)
		}
		rows = append(rows, emptySinceRow{BindingName: name, GlobalAccountID: e.GlobalAccountID, EmptySince: e.Since})
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(s.sql(emptySinceClear)).Error; err != nil {
			return fmt.Errorf("clear: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		values, err := rowsJSON(rows)
		if err != nil {
			return err
		}
		if err := tx.Exec(s.sql(emptySinceInsert), params{"rows": values}).Error; err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		return nil
	})
	return s.wrap("save empty bindings", err)
}
