package db

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// DatabaseTime is the database's clock: KEB's rows, the candidate table's
// age and withdrawals are all timed by it, so the job compares them with
// nothing else.
func (s *Store) DatabaseTime(ctx context.Context) (time.Time, error) {
	var now time.Time
	err := s.db.WithContext(ctx).Raw("SELECT clock_timestamp()").Scan(&now).Error
	return now, s.wrap("read the database's time", err)
}

// EndWithdrawals ends every withdrawal made before takenAt whose binding is
// not among dirty, and says how many it ended. A snapshot taken after a
// withdrawal and showing its binding without a dirty label, or not at all,
// means the account was cleaned, was never marked after all, or is gone:
// from then on the candidate rows, decided on that snapshot, say whether the
// binding may be picked.
func (s *Store) EndWithdrawals(ctx context.Context, takenAt time.Time, dirty []string) (int, error) {
	var before []string
	db := s.db.WithContext(ctx)
	if err := db.Raw("SELECT binding_name FROM "+s.table("withdrawn_bindings")+" WHERE withdrawn_at < ?", takenAt).
		Scan(&before).Error; err != nil {
		return 0, s.wrap("read withdrawals", err)
	}
	over := slices.DeleteFunc(before, func(name string) bool { return slices.Contains(dirty, name) })
	if len(over) == 0 {
		return 0, nil
	}
	// withdrawn_at is checked again: a withdrawal made anew since the read
	// is one the snapshot cannot speak for.
	res := db.Exec("DELETE FROM "+s.table("withdrawn_bindings")+" WHERE withdrawn_at < ? AND binding_name IN ?", takenAt, over)
	return int(res.RowsAffected), s.wrap(fmt.Sprintf("end withdrawals made before %s", takenAt.Format(time.RFC3339)), res.Error)
}
