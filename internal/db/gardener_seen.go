package db

import (
	"context"
	_ "embed"
	"time"
)

// StampGardenerSeen records that the candidate table has seen Gardener's
// bindings up to seenAt (by the database's clock): every change Gardener
// committed before it is in the table. It stamps only while the table is
// still the rewrite whose snapshot was taken at computedAt, the one the
// caller proved this for, and never moves the stamp back; stamped says
// whether it did. A rewrite lowers a later stamp to its snapshot's time
// (ReplaceCandidates), so the caller stamps it anew once proved.
func (s *Store) StampGardenerSeen(ctx context.Context, seenAt, computedAt time.Time) (stamped bool, err error) {
	res := s.db.WithContext(ctx).Exec(s.sql(candidatesSeenStamp), params{"seen_at": seenAt, "computed_at": computedAt})
	return res.RowsAffected > 0, s.wrap("stamp how far the candidate table has seen Gardener", res.Error)
}

//go:embed sql/candidates_seen_stamp.sql
var candidatesSeenStamp string
