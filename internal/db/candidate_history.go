package db

import (
	_ "embed"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// historyRow is one version of a candidate row (candidate_history).
type historyRow struct {
	CandidateValues `gorm:"embedded"`
	ValidFrom       time.Time  `gorm:"column:valid_from"`
	ValidTo         *time.Time `gorm:"column:valid_to"`
}

// version is the row as the shadow job reads it.
func (r historyRow) version() hap.CandidateVersion {
	v := hap.CandidateVersion{Candidate: r.candidate(), ValidFrom: r.ValidFrom}
	if r.ValidTo != nil {
		v.ValidTo = *r.ValidTo
	}
	return v
}

// recordCandidateHistory keeps, in the rewrite's transaction, what the table
// holds from now on: the versions of the rows the rewrite changed or removed
// end now, the rows it wrote start now, and the rewrite itself is noted with
// the time of the snapshot it came from. "Now" is the transaction's time on
// the database's clock, the clock KEB's instance rows carry. The rewrite
// writes only rows whose values changed: a pick's reservation is not a
// version.
func (s *Store) recordCandidateHistory(tx *gorm.DB, ch candidateChanges, snapshotAt time.Time) error {
	written := bindings(ch.remove)
	var versions []CandidateValues
	for _, r := range slices.Concat(ch.insert, ch.update) {
		written = append(written, r.BindingName)
		versions = append(versions, r.CandidateValues)
	}
	if len(written) > 0 {
		if err := tx.Exec(s.sql(candidateHistoryClose), params{"bindings": jsonList(written)}).Error; err != nil {
			return fmt.Errorf("close candidate history: %w", err)
		}
	}
	if len(versions) > 0 {
		rows, err := rowsJSON(versions)
		if err != nil {
			return err
		}
		if err := tx.Exec(s.sql(candidateHistoryOpen), params{"rows": rows}).Error; err != nil {
			return fmt.Errorf("record candidate history: %w", err)
		}
	}
	return tx.Exec(s.sql(candidateRewritesNote), params{"snapshot_at": snapshotAt}).Error
}

// takeBackHistory undoes, in the rewrite's transaction, what
// recordCandidateHistory recorded of the bindings whose rows the rewrite
// then left as a claim since its read wrote them (applyCandidateChanges):
// the history holds the rows the job wrote, and RecordClaim's row is none,
// so the binding's version before the rewrite stays open, as it would had
// the claim come after the rewrite. The rewrite itself stays noted: it was
// committed, and the other rows are its snapshot's.
func (s *Store) takeBackHistory(tx *gorm.DB, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if err := tx.Exec(s.sql(candidateHistoryTakeBack), params{"bindings": jsonList(names)}).Error; err != nil {
		return fmt.Errorf("take back the history of %d candidates a claim kept: %w", len(names), err)
	}
	return nil
}

var (
	//go:embed sql/candidate_history_take_back.sql
	candidateHistoryTakeBack string
	//go:embed sql/candidate_history_close.sql
	candidateHistoryClose string
	//go:embed sql/candidate_history_open.sql
	candidateHistoryOpen string
	//go:embed sql/candidate_rewrites_note.sql
	candidateRewritesNote string
)
