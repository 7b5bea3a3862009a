package provisioning

import (
	"sync/atomic"
	"time"
)

// lookedAt is what a Client last found of something it looks up in the
// database once per interval rather than per pick (KEB's index, the job's
// schema version): between two looks, a pick reads the answer kept here.
type lookedAt struct {
	last atomic.Pointer[look]
}

// look is one answer: found is nil when all is well, else the error the
// pick answers; key is what was looked at (a schema name), so a client
// pointed elsewhere looks again.
type look struct {
	at    time.Time
	key   string
	found error
}

// answer returns the answer kept for key when it is younger than every,
// else looks (lookUp) and keeps what it finds. A look that fails (its
// second result) is not kept, so the next call looks again. Concurrent
// calls after the interval may each look once; none waits for another.
func (l *lookedAt) answer(key string, every time.Duration, lookUp func() (found, failed error)) error {
	if s := l.last.Load(); s != nil && s.key == key && time.Since(s.at) < every {
		return s.found
	}
	found, failed := lookUp()
	if failed != nil {
		return failed
	}
	l.last.Store(&look{at: time.Now(), key: key, found: found})
	return found
}

// forget drops the answer kept, so that the next call looks again.
func (l *lookedAt) forget() { l.last.Store(nil) }
