package app

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// DefaultStuckAfterRuns is how many of a job's scheduled times may pass
// without a run of it completing before serve counts its scheduler as stuck.
const DefaultStuckAfterRuns = 3

// minStuckWindow is the least time a job may go without a completed run
// before it counts as stuck, whatever its schedule: at XL a run takes about
// a minute and the jobs wait for each other, so a schedule of seconds must
// not make a slow run look like a stuck scheduler.
const minStuckWindow = 10 * time.Minute

// Liveness tells whether serve's scheduler still completes runs: every job
// must complete a run, whatever its outcome, before the stuckAfter-th of its
// scheduled times after its last completed run (or after scheduling
// started). A run hanging in a job, which holds up every other job too, or a
// scheduler that no longer fires fails it, and a restart cures both. A run
// that fails because Gardener or the database is down completes and does
// not: a restart would cure nothing there, and the job's own alerts say so.
type Liveness struct {
	stuckAfter int
	now        func() time.Time
	schedules  map[string]cron.Schedule

	mu      sync.Mutex
	started bool
	last    map[string]time.Time
}

// newLiveness parses each job's schedule (job name to cron spec) once.
func newLiveness(specs map[string]string, stuckAfter int, now func() time.Time) (*Liveness, error) {
	if stuckAfter < 1 {
		return nil, fmt.Errorf("stuck after %d scheduled runs: want at least 1", stuckAfter)
	}
	l := &Liveness{stuckAfter: stuckAfter, now: now, schedules: map[string]cron.Schedule{}, last: map[string]time.Time{}}
	for job, spec := range specs {
		s, err := cron.ParseStandard(spec)
		if err != nil {
			return nil, fmt.Errorf("schedules.%s: %q: %w", job, spec, err)
		}
		l.schedules[job] = s
	}
	return l, nil
}

// Start marks the moment scheduling starts: every job's first deadline
// counts from it. Until then nothing is stuck.
func (l *Liveness) Start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for job := range l.schedules {
		l.last[job] = now
	}
	l.started = true
}

// Completed records that a run of job ended, whatever its outcome.
func (l *Liveness) Completed(job string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		l.last[job] = l.now()
	}
}

// Stuck returns, for each job past its deadline, why, in job order; none
// while the scheduler keeps completing runs.
func (l *Liveness) Stuck() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started {
		return nil
	}
	return stuckJobs(l.schedules, l.last, l.stuckAfter, l.now())
}

// stuckJobs names the jobs whose stuckAfter-th scheduled time after their
// last completed run has passed at now (minStuckWindow after it at the
// earliest), saying since when.
func stuckJobs(schedules map[string]cron.Schedule, last map[string]time.Time, stuckAfter int, now time.Time) []string {
	var out []string
	for job, s := range schedules {
		deadline := last[job]
		for range stuckAfter {
			deadline = s.Next(deadline)
		}
		deadline = later(deadline, last[job].Add(minStuckWindow))
		if now.After(deadline) {
			out = append(out, fmt.Sprintf("job %s: no run completed since %s; %d scheduled runs were due by %s",
				job, last[job].UTC().Format(time.RFC3339), stuckAfter, deadline.UTC().Format(time.RFC3339)))
		}
	}
	sort.Strings(out)
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
