package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/test/jobstest"
)

// testClock is a clock the test moves.
type testClock struct{ now time.Time }

func (c *testClock) Now() time.Time          { return c.now }
func (c *testClock) set(hh, mm, ss int)      { c.now = time.Date(2026, 1, 1, hh, mm, ss, 0, time.UTC) }
func (c *testClock) advance(d time.Duration) { c.now = c.now.Add(d) }

// /healthz fails once a job missed three of its scheduled runs without one
// completing, and recovers when one completes; /readyz keeps meaning "the
// schedules run" and is not touched by it.
func TestHealthzFailsOnceTheSchedulerCompletesNoRunForThreeScheduledTimes(t *testing.T) {
	clock := &testClock{}
	clock.set(10, 0, 30)
	liveness, err := newLiveness(map[string]string{"drift": "*/10 * * * *", "release": "15 * * * *"}, 3, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	sv := &Server{Env: &Env{Metrics: metrics.New(), Log: zap.NewNop()}}
	var ready atomic.Bool
	h := sv.handler(&ready, liveness)
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	expect := func(when string, wantHealthz int) {
		t.Helper()
		if code, body := get("/healthz"); code != wantHealthz {
			t.Fatalf("%s (%s): /healthz %d %q, want %d", when, clock.now.Format(time.TimeOnly), code, body, wantHealthz)
		}
	}

	// The first list of Gardener takes its time: nothing is due before
	// scheduling starts.
	clock.advance(2 * time.Hour)
	expect("before scheduling starts", http.StatusOK)
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before scheduling starts: %d, want 503", code)
	}

	clock.set(11, 0, 30)
	liveness.Start()
	ready.Store(true)
	clock.set(11, 30, 0) // drift was due at 11:10, 11:20 and 11:30
	expect("at drift's third scheduled time", http.StatusOK)
	clock.set(11, 25, 0)
	liveness.Completed("drift")
	clock.set(11, 50, 0)
	expect("three scheduled times after drift's last run", http.StatusOK)

	clock.set(11, 50, 1)
	code, body := get("/healthz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "job drift: no run completed since 2026-01-01T11:25:00Z") {
		t.Fatalf("past drift's third scheduled time without a run: /healthz %d %q, want 503 naming drift", code, body)
	}
	if strings.Contains(body, "release") {
		t.Errorf("/healthz names release, due at 11:15 and 12:15 only: %q", body)
	}
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz while stuck: %d, want 200 (readiness keeps meaning the schedules run)", code)
	}

	liveness.Completed("drift")
	expect("after drift completed again", http.StatusOK)
	clock.set(13, 15, 1) // release's third scheduled time passed, no run
	liveness.Completed("drift")
	wantRelease := "job release: no run completed since 2026-01-01T11:00:30Z"
	if _, body := get("/healthz"); !strings.Contains(body, wantRelease) {
		t.Errorf("past release's third scheduled time: /healthz %q, want %q", body, wantRelease)
	}
}

// A run that fails (the database is down) completes all the same: a
// restart would not bring the database back.
func TestAFailedRunKeepsTheSchedulerAlive(t *testing.T) {
	clock := &testClock{}
	clock.set(10, 0, 30)
	cfg := config.Default()
	store := jobstest.NewStore()
	store.Fail = map[string]error{"ReadInstanceCounts": errors.New("the database is down")}
	m := metrics.New()
	env := &Env{Metrics: m, Log: zap.NewNop(), Config: cfg, Runner: jobs.NewRunner(cfg.Jobs,
		jobs.Ports{Gardener: jobstest.NewGardener(), Store: store, Metrics: m, Log: zap.NewNop(), Now: clock.Now}, nil)}
	liveness, err := newLiveness(cfg.Jobs.CronSchedules(), 3, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	liveness.Start()
	queue := &JobQueue{Env: env, Stopping: context.Background(), JobCtx: context.Background(), Completed: liveness.Completed}

	clock.set(10, 29, 0)
	queue.Run(jobs.JobDrift, "scheduled")
	clock.set(10, 31, 0) // drift's third time since the start, not since its run
	for _, why := range liveness.Stuck() {
		if strings.Contains(why, "job drift") {
			t.Fatalf("drift counted as stuck after a failed run at 10:29: %s", why)
		}
	}
}

// A schedule of seconds gives a job ten minutes all the same: runs at scale
// take a minute and wait for each other.
func TestAShortScheduleIsNotStuckWithinTenMinutes(t *testing.T) {
	clock := &testClock{}
	clock.set(10, 0, 0)
	liveness, err := newLiveness(map[string]string{"metrics": "@every 30s"}, 3, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	liveness.Start()
	clock.set(10, 10, 0)
	if stuck := liveness.Stuck(); len(stuck) != 0 {
		t.Fatalf("ten minutes after the start: %v, want nothing stuck", stuck)
	}
	clock.set(10, 10, 1)
	if stuck := liveness.Stuck(); len(stuck) != 1 {
		t.Fatalf("past ten minutes without a run: %v, want metrics stuck", stuck)
	}
}
