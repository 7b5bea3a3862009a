package jobstest

import (
	"context"
	"sync"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

var (
	_ jobs.Gardener = (*Gardener)(nil)
	_ jobs.Store    = (*Store)(nil)
	_ jobs.Locker   = (*Locker)(nil)
)

// Locker is an in-memory run lock of one landscape.
type Locker struct {
	mu   sync.Mutex
	held bool
	// Lost, when set, is what a held lock's Held returns: its session ended.
	Lost error
}

// TryRunLock takes the lock unless a run holds it.
func (l *Locker) TryRunLock(context.Context) (lock jobs.RunLock, acquired bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return nil, false, nil
	}
	l.held = true
	return &RunLock{l: l}, true, nil
}

// Hold takes the lock as another run would; release it with the returned func.
func (l *Locker) Hold() (release func()) {
	lock, ok, _ := l.TryRunLock(context.Background())
	if !ok {
		panic("jobstest: the lock is already held")
	}
	return lock.Release
}

// RunLock is a held Locker.
type RunLock struct{ l *Locker }

func (r *RunLock) Held(context.Context) error {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return r.l.Lost
}

func (r *RunLock) Release() {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	r.l.held = false
}
