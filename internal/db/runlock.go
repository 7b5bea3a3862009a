package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"errors"
	"sync"
	"time"

	"gorm.io/gorm"
)

// ErrRunLockLost means the session that held the run lock ended (the
// database restarted, or the connection broke), so another run may have
// started alongside this one.
var ErrRunLockLost = errors.New("the run lock was lost: its database session ended")

// RunLock is a held run lock.
type RunLock struct {
	conn *sql.Conn
	// session runs statements on conn alone, the session holding the lock.
	session *gorm.DB
	sql     func(string, ...string) string
	key     int64
	once    sync.Once
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
	// A session with a context of its own has a statement of its own:
	// pointing it at conn leaves the Store's pool as it is.
	session := s.db.WithContext(ctx)
	session.Statement.ConnPool = conn
	if err := session.Raw(s.sql(runLockTry), params{"key": key}).Scan(&acquired).Error; err != nil {
		_ = conn.Close()
		return nil, false, s.wrap("take run lock", err)
	}
	if !acquired {
		_ = conn.Close()
		return nil, false, nil
	}
	return &RunLock{conn: conn, session: session, sql: s.sql, key: key}, true, nil
}

var (
	//go:embed sql/run_lock_try.sql
	runLockTry string
	//go:embed sql/run_lock_held.sql
	runLockHeld string
	//go:embed sql/run_lock_release.sql
	runLockRelease string
)

// Held returns nil while the lock's session still holds it, and an error
// wrapping ErrRunLockLost once it does not, or cannot tell.
func (l *RunLock) Held(ctx context.Context) error {
	var held bool
	if err := l.session.WithContext(ctx).Raw(l.sql(runLockHeld), params{"key": l.key}).Scan(&held).Error; err != nil {
		return errors.Join(ErrRunLockLost, err)
	}
	if !held {
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
		err := l.session.WithContext(ctx).Raw(l.sql(runLockRelease), params{"key": l.key}).Scan(&unlocked).Error
		if err != nil || !unlocked {
			// Ending the session frees the lock whatever state it is in;
			// ErrBadConn makes database/sql close it rather than pool it.
			_ = l.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = l.conn.Close()
	})
}
