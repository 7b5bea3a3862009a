package db

import (
	"errors"
	"testing"
)

// Each Store stands for one pod: its own pool, its own sessions.
func TestRunLockExcludesASecondHolder(t *testing.T) {
	_, url := newDatabase(t)
	ctx := testContext(t)
	first, second := openStore(t, url, Options{}), openStore(t, url, Options{})

	lock, acquired, err := first.TryRunLock(ctx)
	if err != nil || !acquired {
		t.Fatalf("first TryRunLock: acquired %v, %v", acquired, err)
	}
	if err := lock.Held(ctx); err != nil {
		t.Fatalf("Held right after taking the lock: %v", err)
	}
	if _, acquired, err := second.TryRunLock(ctx); err != nil || acquired {
		t.Fatalf("second TryRunLock while the first holds it: acquired %v, %v; want false", acquired, err)
	}
	// Another schema is another landscape.
	other := openStore(t, url, Options{Schema: "hap_other"})
	otherLock, acquired, err := other.TryRunLock(ctx)
	if err != nil || !acquired {
		t.Fatalf("TryRunLock of another schema: acquired %v, %v; want true", acquired, err)
	}
	otherLock.Release()

	lock.Release()
	lock.Release() // safe twice
	secondLock, acquired, err := second.TryRunLock(ctx)
	if err != nil || !acquired {
		t.Fatalf("second TryRunLock after release: acquired %v, %v; want true", acquired, err)
	}
	secondLock.Release()
}

// A database restart ends the lock's session and so frees the lock; the
// holder must be able to tell before it changes anything else.
func TestRunLockTellsWhenItsSessionEnded(t *testing.T) {
	_, url := newDatabase(t)
	ctx := testContext(t)
	holder, other := openStore(t, url, Options{}), openStore(t, url, Options{})

	lock, acquired, err := holder.TryRunLock(ctx)
	if err != nil || !acquired {
		t.Fatalf("TryRunLock: acquired %v, %v", acquired, err)
	}
	defer lock.Release()
	var ended int
	if err := other.sqlDB.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid, 30000)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
		  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&ended); err != nil || ended != 1 {
		t.Fatalf("ending the lock's session: %d ended, %v", ended, err)
	}
	if err := lock.Held(ctx); !errors.Is(err, ErrRunLockLost) {
		t.Fatalf("Held after the session ended: %v, want ErrRunLockLost", err)
	}
	taken, acquired, err := other.TryRunLock(ctx)
	if err != nil || !acquired {
		t.Fatalf("the lock is free once its session ended, yet TryRunLock: acquired %v, %v", acquired, err)
	}
	taken.Release()
}
