package db

import "testing"

// Each Store stands for one pod: its own pool, its own sessions.
func TestRunLockExcludesASecondHolder(t *testing.T) {
	_, url := newDatabase(t)
	ctx := testContext(t)
	first, second := openStore(t, url, Options{}), openStore(t, url, Options{})

	release, acquired, err := first.TryRunLock(ctx)
	if err != nil || !acquired {
		t.Fatalf("first TryRunLock: acquired %v, %v", acquired, err)
	}
	if _, acquired, err := second.TryRunLock(ctx); err != nil || acquired {
		t.Fatalf("second TryRunLock while the first holds it: acquired %v, %v; want false", acquired, err)
	}
	// Another schema is another landscape.
	other := openStore(t, url, Options{Schema: "hap_other"})
	releaseOther, acquired, err := other.TryRunLock(ctx)
	if err != nil || !acquired {
		t.Fatalf("TryRunLock of another schema: acquired %v, %v; want true", acquired, err)
	}
	releaseOther()

	release()
	release() // safe twice
	releaseSecond, acquired, err := second.TryRunLock(ctx)
	if err != nil || !acquired {
		t.Fatalf("second TryRunLock after release: acquired %v, %v; want true", acquired, err)
	}
	releaseSecond()
}
