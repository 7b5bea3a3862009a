package db

import (
	"context"
	_ "embed"
	"fmt"
	"time"
)

// DatabaseTime is the database's clock: KEB's rows, the candidate table's
// age and withdrawals are all timed by it, so the job compares them with
// nothing else.
func (s *Store) DatabaseTime(ctx context.Context) (time.Time, error) {
	var now time.Time
	err := s.db.WithContext(ctx).Raw(s.sql(databaseClock)).Scan(&now).Error
	return now, s.wrap("read the database's time", err)
}

// EndWithdrawals ends every withdrawal made before takenAt whose binding is
// not among dirty, and says how many it ended. A snapshot taken after a
// withdrawal and showing its binding without a dirty label, or not at all,
// means the account was cleaned, was never marked after all, or is gone:
// from then on the candidate rows, decided on that snapshot, say whether the
// binding may be picked.
func (s *Store) EndWithdrawals(ctx context.Context, takenAt time.Time, dirty []string) (int, error) {
	res := s.db.WithContext(ctx).Exec(s.sql(withdrawalsEnd), params{"taken_at": takenAt, "dirty": jsonList(dirty)})
	return int(res.RowsAffected), s.wrap(fmt.Sprintf("end withdrawals made before %s", takenAt.Format(time.RFC3339)), res.Error)
}

var (
	//go:embed sql/database_clock.sql
	databaseClock string
	//go:embed sql/withdrawals_end.sql
	withdrawalsEnd string
)
