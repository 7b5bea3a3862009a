package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"time"
)

// ErrRunLockLost means the session that held the run lock ended (the
// database restarted, or the connection broke), so another run may have
// started alongside this one.
var ErrRunLockLost = errors.New("the run lock was lost: its database session ended")

// RunLock is a held run lock.
type RunLock struct {
	conn *sql.Conn
	key  int64
	once sync.Once
}

// TryRunLock takes the run lock without waiting: a session-level advisory
// lock, so only one run per landscape works at a time across pods. The
// lock lives as long as the session, so the session gets a connection of its
// own that nothing else uses until Release. acquired is false when another
// session holds the lock.
//
// If the database restarts or the connection breaks during the run,
// PostgreSQL frees the lock with the session and another run can take it:
// Held tells, and a run asks before every change it cannot undo.
func (s *Store) TryRunLock(ctx context.Context) (lock *RunLock, acquired bool, err error) {
	key := s.advisoryKey("run")
	conn, err := s.sqlDB.Conn(ctx)
	if err != nil {
		return nil, false, s.wrap("take run lock", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&acquired); err != nil {
		_ = conn.Close()
		return nil, false, s.wrap("take run lock", err)
	}
	if !acquired {
		_ = conn.Close()
		return nil, false, nil
	}
	return &RunLock{conn: conn, key: key}, true, nil
}

// heldSQL finds the lock among the session's own: a bigint advisory key is
// stored as its high and low 32 bits, with objsubid 1.
const heldSQL = `SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1
  AND ((classid::bigint << 32) | objid::bigint) = $1`

// Held returns nil while the lock's session still holds it, and an error
// wrapping ErrRunLockLost once it does not, or cannot tell.
func (l *RunLock) Held(ctx context.Context) error {
	var n int
	if err := l.conn.QueryRowContext(ctx, heldSQL, l.key).Scan(&n); err != nil {
		return errors.Join(ErrRunLockLost, err)
	}
	if n != 1 {
		return ErrRunLockLost
	}
	return nil
}

// Release frees the lock; it is safe to call more than once.
func (l *RunLock) Release() {
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var unlocked bool
		err := l.conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", l.key).Scan(&unlocked)
		if err != nil || !unlocked {
			// Ending the session frees the lock whatever state it is in;
			// ErrBadConn makes database/sql close it rather than pool it.
			_ = l.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = l.conn.Close()
	})
}
