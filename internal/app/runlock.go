package app

import (
	"context"

	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// runLocker hands the store's run lock to the jobs as their port.
type runLocker struct{ store *db.Store }

func (l runLocker) TryRunLock(ctx context.Context) (jobs.RunLock, bool, error) {
	lock, acquired, err := l.store.TryRunLock(ctx)
	if !acquired {
		// No lock: a nil *db.RunLock must not pass for a held one.
		return nil, false, err
	}
	return lock, true, err
}
