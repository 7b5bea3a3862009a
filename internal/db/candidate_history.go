package db

import (
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
)

// historyRow is one version of a candidate row (candidate_history).
type historyRow struct {
	CandidateValues `gorm:"embedded"`
	ValidFrom       time.Time  `gorm:"column:valid_from"`
	ValidTo         *time.Time `gorm:"column:valid_to"`
}

// recordCandidateHistory keeps, in the rewrite's transaction, what the table
// holds from now on: the versions of the rows the rewrite changed or removed
// end now, the rows it wrote start now, and the rewrite itself is noted with
// the time of the snapshot it came from. "Now" is the transaction's time on
// the database's clock, the clock KEB's instance rows carry. Only rows whose
// values changed are recorded: a pick's reservation is not a version.
func (s *Store) recordCandidateHistory(tx *gorm.DB, ch candidateChanges, snapshotAt time.Time) error {
	history := s.table("candidate_history")
	written := slices.Concat(ch.revised, ch.remove)
	for _, r := range ch.insert {
		written = append(written, r.BindingName)
	}
	for start := 0; start < len(written); start += batchSize {
		if err := tx.Exec("UPDATE "+history+" SET valid_to = now() WHERE valid_to IS NULL AND binding_name IN ?",
			written[start:min(start+batchSize, len(written))]).Error; err != nil {
			return fmt.Errorf("close candidate history: %w", err)
		}
	}
	var now time.Time
	if err := tx.Raw("SELECT now()").Scan(&now).Error; err != nil {
		return fmt.Errorf("read the rewrite's time: %w", err)
	}
	revised := map[string]bool{}
	for _, name := range ch.revised {
		revised[name] = true
	}
	versions := make([]historyRow, 0, len(ch.insert)+len(ch.revised))
	record := func(r candidateRow) {
		versions = append(versions, historyRow{CandidateValues: r.CandidateValues, ValidFrom: now})
	}
	for _, r := range ch.insert {
		record(r)
	}
	for _, r := range ch.update {
		if revised[r.BindingName] {
			record(r)
		}
	}
	if len(versions) > 0 {
		if err := tx.Table(history).CreateInBatches(&versions, batchSize).Error; err != nil {
			return fmt.Errorf("record candidate history: %w", err)
		}
	}
	return tx.Exec("INSERT INTO "+s.table("candidate_rewrites")+" (written_at, snapshot_at) VALUES (now(), ?) ON CONFLICT (written_at) DO NOTHING",
		snapshotAt).Error
}
