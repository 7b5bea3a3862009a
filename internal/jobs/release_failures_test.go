package jobs_test

import (
	"errors"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Every test here takes a binding past its grace period, breaks one part of
// the picture, and checks that not one binding changed.

func TestNothingIsReleasedWhenTheGlobalGuardTrips(t *testing.T) {
	s := leftEmptyPastGrace(t, 20)

	// The classic symptom of reading the wrong database: no active
	// instances at all while Gardener holds shoots.
	s.exec(t, `ALTER TABLE instances RENAME TO instances_elsewhere;
		CREATE TABLE instances (LIKE instances_elsewhere INCLUDING ALL)`)
	if err := s.runReleasingNothing(t, "although the database reports no clusters"); err != nil {
		t.Fatalf("a tripped guard failed the run: %v", err)
	}
	if n := counter(t, s, "hap_reconciler_release_guard_tripped_total"); n != 1 {
		t.Errorf("guard trips counted: %v, want 1", n)
	}

	// The guard alone held the binding back.
	s.exec(t, `DROP TABLE instances; ALTER TABLE instances_elsewhere RENAME TO instances`)
	s.mustRun(t, releaseOnly)
	if !s.released(t, "left-empty") {
		t.Error("not released once the database answers again")
	}
}

func TestNothingIsReleasedWhenKEBsTableCannotBeRead(t *testing.T) {
	s := leftEmptyPastGrace(t, 21)

	// A role that may use the job's tables but not read KEB's.
	const role, password = "release_without_keb", "not-a-secret"
	if err := bed.Postgres.CreateRole(testContext(t), role, password); err != nil {
		t.Fatal(err)
	}
	s.exec(t, `GRANT USAGE ON SCHEMA hap TO `+role+`;
		GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA hap TO `+role+`;
		GRANT USAGE ON ALL SEQUENCES IN SCHEMA hap TO `+role)
	s.env = s.open(t, bed.Kube.Config(), bed.Postgres.RoleURL(role, password, s.World.DatabaseName), false)

	err := s.runReleasingNothing(t, "without the database's picture")
	if err == nil || !strings.Contains(err.Error(), "instances") {
		t.Fatalf("want the run to fail on KEB's table, got %v", err)
	}
}

func TestNothingIsReleasedWhenTheDatabaseIsGoneAtTheRecheck(t *testing.T) {
	s := leftEmptyPastGrace(t, 22)

	s.env.Runner.BeforeAct = func(string) {
		if err := bed.Postgres.Exec(testContext(t), "postgres", "DROP DATABASE "+s.World.DatabaseName+" WITH (FORCE)"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.runReleasingNothing(t, "without the fresh database count"); err == nil {
		t.Fatal("the run succeeded without the fresh database count")
	}
}

// A database restart ends the run lock's session, and another run may start
// beside this one: the run stops before its next label update, and the next
// run, holding the lock again, releases the binding.
func TestNothingIsReleasedAfterTheRunLockWasLost(t *testing.T) {
	s := leftEmptyPastGrace(t, 23)

	s.env.Runner.BeforeAct = func(string) {
		s.exec(t, `SELECT pg_terminate_backend(pid, 30000) FROM pg_locks
			WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	}
	if err := s.runReleasingNothing(t, "after the run lock was lost"); !errors.Is(err, db.ErrRunLockLost) {
		t.Fatalf("want the run to fail on the lost lock, got %v", err)
	}

	s.env.Runner.BeforeAct = nil
	s.mustRun(t, releaseOnly)
	if !s.released(t, "left-empty") {
		t.Error("the next run did not release the binding")
	}
}

// pageFailure makes one page of one list request fail with an error no retry
// helps, halfway through the list: the earlier pages were delivered.
type pageFailure struct {
	resource string // the listed resource, e.g. "shoots"
	list     int    // which list of the resource, counted from 1 per client
	page     int    // which page of that list, counted from 1

	mu       sync.Mutex
	lists    int
	pages    int
	injected bool
}

var errPageLost = errors.New("page lost: the connection was closed by a proxy")

func (f *pageFailure) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if f.hit(req) {
			return nil, errPageLost
		}
		return next.RoundTrip(req)
	})
}

func (f *pageFailure) hit(req *http.Request) bool {
	if req.Method != http.MethodGet || path.Base(req.URL.Path) != f.resource {
		return false // not a list of the resource
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if req.URL.Query().Get("continue") == "" {
		f.lists, f.pages = f.lists+1, 1
	} else {
		f.pages++
	}
	if f.lists == f.list && f.pages == f.page {
		f.injected = true
		return true
	}
	return false
}

type roundTripper func(*http.Request) (*http.Response, error)

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return rt(req) }

func TestNothingIsReleasedWhenAListFailsHalfway(t *testing.T) {
	cases := []struct {
		name    string
		failure *pageFailure
		// aborted: the decision was taken and audited as given up.
		aborted bool
	}{
		{"bindings, while gathering", &pageFailure{resource: "credentialsbindings", list: 1, page: 2}, false},
		{"shoots, while gathering", &pageFailure{resource: "shoots", list: 1, page: 3}, false},
		{"shoots, in the fresh look before acting", &pageFailure{resource: "shoots", list: 2, page: 2}, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := background(uint64(30 + i))
			// First by name, so the pages delivered before the failure
			// hold it: on a partial picture it would look releasable.
			emptyBinding(l, "a-left-empty", "ga-gone")
			s := newScene(t, l, func(c *config.Config) { c.Gardener.PageSize = 2 })
			s.startClocks(t)

			failing := rest.CopyConfig(bed.Kube.Config())
			failing.Wrap(tc.failure.wrap)
			s.env = s.open(t, failing, s.World.DatabaseURL, false)
			err := s.runReleasingNothing(t, "on a partial list")
			if !tc.failure.injected {
				t.Fatal("the failure was never injected: the scene has too few objects for that page")
			}
			if !errors.Is(err, errPageLost) {
				t.Fatalf("want the run to fail with the lost page, got %v", err)
			}
			var want []string
			if tc.aborted {
				want = []string{hap.OutcomeAborted}
			}
			if got := s.outcomes(t, "a-left-empty"); !slices.Equal(got, want) {
				t.Errorf("audit outcomes %v, want %v", got, want)
			}
		})
	}
}

func TestAReleaseWhoseAuditRowCannotBeWrittenFailsTheRun(t *testing.T) {
	s := leftEmptyPastGrace(t, 23)

	// From now on the history takes intents but no outcome.
	s.env.Runner.BeforeAct = func(string) {
		s.exec(t, `ALTER TABLE hap.binding_releases ADD CONSTRAINT refuse_outcomes CHECK (outcome = '`+hap.OutcomeIntent+`') NOT VALID`)
	}
	err := s.run(t, releaseOnly)
	if err == nil || !strings.Contains(err.Error(), "left-empty was released but the release is not recorded") {
		t.Fatalf("want the run to fail naming the unrecorded release, got %v", err)
	}
	if !s.released(t, "left-empty") {
		t.Error("the scene is broken: the binding was not released")
	}
}

// counter reads the value of a counter without labels from the job's
// registry.
func counter(t *testing.T, s *scene, name string) float64 {
	t.Helper()
	families, err := s.env.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}
