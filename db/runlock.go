package db

import (
	"context"
	"database/sql/driver"
	"sync"
	"time"
)

// TryRunLock takes the run lock without waiting: a session-level advisory
// lock, so only one run per landscape works at a time across pods. The
// lock lives as long as the session, so the session gets a connection of its
// own that nothing else uses until release. acquired is false when another
// session holds the lock. release is safe to call more than once, and is a
// no-op when the lock was not acquired.
//
// If the database connection breaks during the run, PostgreSQL frees the
// lock with the session; the run's other statements then fail too.
func (s *Store) TryRunLock(ctx context.Context) (release func(), acquired bool, err error) {
	noop := func() {}
	key := s.advisoryKey("run")
	conn, err := s.sqlDB.Conn(ctx)
	if err != nil {
		return noop, false, s.wrap("take run lock", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&acquired); err != nil {
		_ = conn.Close()
		return noop, false, s.wrap("take run lock", err)
	}
	if !acquired {
		_ = conn.Close()
		return noop, false, nil
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var unlocked bool
			err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", key).Scan(&unlocked)
			if err != nil || !unlocked {
				// Ending the session frees the lock whatever state it is in;
				// ErrBadConn makes database/sql close it rather than pool it.
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
			_ = conn.Close()
		})
	}
	return release, true, nil
}
