package jobs_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap/zaptest"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/test/jobstest"
)

// These tests run each job's decide-then-act path on the in-memory fakes of
// its ports, in milliseconds and under go test -short. The same paths meet
// the real API server and PostgreSQL in the other tests of this package.

// fakeScene is a small aws landscape on the fakes: ga-1 has a busy binding
// (two clusters) and one whose shoot KEB's database does not know; ga-2's
// binding holds nothing; one binding is free.
type fakeScene struct {
	gardener *jobstest.Gardener
	store    *jobstest.Store
	locker   *jobstest.Locker
	runner   *jobs.Runner
	metrics  *metrics.Metrics
	now      time.Time
}

func newFakeScene(t *testing.T) *fakeScene {
	t.Helper()
	return newFakeSceneWith(t, nil)
}

// newFakeSceneWith is newFakeScene with its configuration adjusted before
// the runner resolves it.
func newFakeSceneWith(t *testing.T, adjust func(*config.Config)) *fakeScene {
	t.Helper()
	g, store := jobstest.NewGardener(), jobstest.NewStore()
	aws := func(ga string) map[string]string {
		l := map[string]string{hap.LabelHyperscalerType: "aws"}
		if ga != "" {
			l[hap.LabelTenantName] = ga
		}
		return l
	}
	g.PutBinding("aws-busy", aws("ga-1"))
	g.PutBinding("aws-unknown-shoot", aws("ga-1"))
	g.PutBinding("aws-idle", aws("ga-2"))
	g.PutBinding("aws-free", aws(""))
	g.PutShoot(hap.Shoot{Name: "c1", BindingName: "aws-busy", RuntimeID: "rt-1"})
	g.PutShoot(hap.Shoot{Name: "c2", BindingName: "aws-busy", RuntimeID: "rt-2"})
	g.PutShoot(hap.Shoot{Name: "c3", BindingName: "aws-unknown-shoot", RuntimeID: "rt-3"})
	store.Instances = []hap.InstanceCount{{BindingName: "aws-busy", GlobalAccountID: "ga-1", Active: 2, RuntimeIDs: hap.RuntimeIDsOf("rt-1", "rt-2")}}

	cfg := config.Default()
	cfg.HAP.MultiHyperscalerAccount = &config.MultiAccount{AllowedGlobalAccounts: []string{"*"}, Limits: config.Limits{Default: 3}}
	cfg.Jobs.Release.GracePeriod = config.Duration{}
	if adjust != nil {
		adjust(&cfg)
	}
	s := &fakeScene{gardener: g, store: store, locker: &jobstest.Locker{}, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	store.Clock = func() time.Time { return s.now }
	s.metrics = metrics.New()
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	s.runner = jobs.NewRunner(cfg.Jobs, jobs.Ports{Namespace: "garden-fake", Gardener: g, Store: store, Metrics: s.metrics, Log: zaptest.NewLogger(t),
		Now: func() time.Time { return s.now }}, s.locker)
	return s
}

func (s *fakeScene) run(t *testing.T, dryRun jobs.DryRun, job ...string) error {
	t.Helper()
	if len(job) == 0 {
		job = jobs.AllJobs
	}
	return s.runner.Run(context.Background(), jobs.Options{Jobs: job, DryRun: dryRun})
}

func outcomes(rs []hap.ReleaseRecord) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.BindingName+":"+r.Outcome)
	}
	return out
}

func TestEveryJobDecidesAndActsOnTheFakes(t *testing.T) {
	s := newFakeScene(t)
	if err := s.run(t, jobs.NoDryRun); err != nil {
		t.Fatal(err)
	}

	// drift: the shoot KEB's database does not know is a finding.
	open, _ := s.store.OpenFindings(context.Background(), hap.AllGlobalAccounts)
	if !slices.ContainsFunc(open, func(f hap.OpenFinding) bool {
		return f.BindingName == "aws-unknown-shoot" && f.Kind == hap.KindCountMismatch && f.ShootCount == 1 && f.DBCount == 0
	}) {
		t.Errorf("drift recorded %+v, want a count_mismatch on aws-unknown-shoot", open)
	}

	// candidates: ga-1's rank 1 is its most populated binding below the limit.
	rows, computed := s.store.Candidates()
	if !computed.Equal(s.now) {
		t.Errorf("table computed at %s, want the database's time of the snapshot %s", computed, s.now)
	}
	i := slices.IndexFunc(rows, func(c hap.Candidate) bool { return c.GlobalAccountID == "ga-1" && c.Rank == 1 })
	if i < 0 || rows[i].BindingName != "aws-busy" || !rows[i].Selectable {
		t.Errorf("ga-1's rank 1: %+v", rows)
	}

	// release: ga-2's empty binding is given back, dirty, intent first.
	if got := s.gardener.Labels("aws-idle")[hap.LabelDirty]; got != "true" {
		t.Errorf("aws-idle dirty label %q, want \"true\"", got)
	}
	if got, want := outcomes(s.store.Releases()), []string{"aws-idle:intent", "aws-idle:released"}; !slices.Equal(got, want) {
		t.Errorf("release history %v, want %v", got, want)
	}
	for _, busy := range []string{"aws-busy", "aws-unknown-shoot", "aws-free"} {
		if _, dirty := s.gardener.Labels(busy)[hap.LabelDirty]; dirty {
			t.Errorf("%s was released", busy)
		}
	}

	// metrics: the pool's sample is recorded and the keb_ gauges are set.
	history, _ := s.store.PoolHistory(context.Background(), s.now)
	if samples := history[hap.Pool{HyperscalerType: "aws"}]; len(samples) != 1 || samples[0].Free != 1 {
		t.Errorf("aws pool history %+v, want one sample with 1 free binding", samples)
	}
	if n, err := testutil.GatherAndCount(s.metrics.Registry, "keb_credentials_bindings_per_ga"); err != nil || n == 0 {
		t.Errorf("keb_credentials_bindings_per_ga: %d series, %v", n, err)
	}
}

func TestAnIncompletePictureChangesNothing(t *testing.T) {
	s := newFakeScene(t)
	s.gardener.ListErr = errors.New("the API server went away")
	err := s.run(t, jobs.NoDryRun)
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("run: %v", err)
	}
	if rows, _ := s.store.Candidates(); rows != nil {
		t.Errorf("candidate table written: %+v", rows)
	}
	if rs := s.store.Releases(); len(rs) != 0 || s.gardener.Updates != 0 {
		t.Errorf("released on a partial picture: %v, %d label updates", outcomes(rs), s.gardener.Updates)
	}
}

// A namespace that lists no binding while KEB's database places clusters
// in bindings (a wrong --namespace) is refused before any job runs: every
// record stays as the last believable picture left it, the error names the
// namespace and the gauge the alert reads says so.
func TestAnImplausiblePictureChangesNoRecord(t *testing.T) {
	s := newFakeScene(t)
	if err := s.run(t, jobs.NoDryRun); err != nil {
		t.Fatal(err)
	}
	before := s.records(t)
	s.runner.Gardener = jobstest.NewGardener()
	s.now = s.now.Add(time.Hour)
	for _, dry := range []jobs.DryRun{jobs.NoDryRun, jobs.DryRunRelease, jobs.DryRunAll} {
		err := s.run(t, dry)
		if !errors.Is(err, jobs.ErrImplausible) || !strings.Contains(err.Error(), `namespace "garden-fake"`) {
			t.Fatalf("dry run %d: %v, want ErrImplausible naming the namespace", dry, err)
		}
		if after := s.records(t); !reflect.DeepEqual(after, before) {
			t.Errorf("dry run %d changed the records:\nbefore %+v\nafter  %+v", dry, before, after)
		}
	}
	if got := implausibleGauge(t, s.metrics); got != 1 {
		t.Errorf("hap_reconciler_picture_implausible %v after a refused run, want 1", got)
	}
	s.runner.Gardener = s.gardener
	if err := s.run(t, jobs.NoDryRun); err != nil {
		t.Fatal(err)
	}
	if got := implausibleGauge(t, s.metrics); got != 0 {
		t.Errorf("hap_reconciler_picture_implausible %v after a believed run, want 0", got)
	}
}

// run --dry-run writes nothing at all: no job's record, no counter.
func TestADryRunWritesNothing(t *testing.T) {
	s := newFakeScene(t)
	empty := s.records(t)
	if err := s.run(t, jobs.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if after := s.records(t); !reflect.DeepEqual(after, empty) {
		t.Errorf("a dry run wrote %+v", after)
	}
	if n := testutil.CollectAndCount(s.metrics.Registry, "hap_reconciler_releases_total"); n != 0 {
		t.Errorf("a dry run counted %d release outcome(s)", n)
	}
	// The same run for real writes each: the check above proves something.
	if err := s.run(t, jobs.NoDryRun); err != nil {
		t.Fatal(err)
	}
	after := s.records(t)
	if len(after.open) == 0 || len(after.candidates) == 0 || len(after.emptySince) == 0 || len(after.releases) == 0 || len(after.pools) == 0 {
		t.Errorf("a real run left a record empty: %+v", after)
	}
}

// fakeRecords are every record of the job's own the fakes hold.
type fakeRecords struct {
	open       []hap.OpenFinding
	candidates []hap.Candidate
	emptySince map[string]hap.EmptySighting
	releases   []hap.ReleaseRecord
	pools      map[hap.Pool][]hap.PoolSample
	shadow     []hap.ShadowResult
}

func (s *fakeScene) records(t *testing.T) fakeRecords {
	t.Helper()
	ctx := context.Background()
	var r fakeRecords
	var err error
	if r.open, err = s.store.OpenFindings(ctx, hap.AllGlobalAccounts); err != nil {
		t.Fatal(err)
	}
	r.candidates, _ = s.store.Candidates()
	if r.emptySince, err = s.store.EmptySince(ctx); err != nil {
		t.Fatal(err)
	}
	r.releases = s.store.Releases()
	if r.pools, err = s.store.PoolHistory(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if r.shadow, err = s.store.ShadowPicks(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	return r
}

func implausibleGauge(t *testing.T, m *metrics.Metrics) float64 {
	const name = "hap_reconciler_picture_implausible"
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no single series %s", name)
	return 0
}

func TestReleaseDryRunAuditsAndChangesNoLabel(t *testing.T) {
	s := newFakeScene(t)
	if err := s.run(t, jobs.DryRunRelease, jobs.JobRelease); err != nil {
		t.Fatal(err)
	}
	if s.gardener.Updates != 0 {
		t.Errorf("a dry run changed %d bindings", s.gardener.Updates)
	}
	if got, want := outcomes(s.store.Releases()), []string{"aws-idle:would_release"}; !slices.Equal(got, want) {
		t.Errorf("release history %v, want %v", got, want)
	}
}

func TestReleaseReChecksTheLiveStateBeforeItActs(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(s *fakeScene)
	}{
		{"a shoot appeared", func(s *fakeScene) {
			s.gardener.PutShoot(hap.Shoot{Name: "late", BindingName: "aws-idle", RuntimeID: "rt-late"})
		}},
		{"an instance appeared", func(s *fakeScene) {
			s.store.Instances = append(s.store.Instances, hap.InstanceCount{BindingName: "aws-idle", GlobalAccountID: "ga-2", Active: 1})
		}},
		{"a pick reserved it", func(s *fakeScene) { s.store.Reserved["aws-idle"] = 1 }},
		{"its labels changed", func(s *fakeScene) {
			s.gardener.PutBinding("aws-idle", map[string]string{hap.LabelHyperscalerType: "aws", hap.LabelTenantName: "ga-3"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newFakeScene(t)
			s.runner.BeforeAct = func(job string) {
				if job == jobs.JobRelease {
					c.change(s)
				}
			}
			if err := s.run(t, jobs.NoDryRun, jobs.JobRelease); err != nil {
				t.Fatal(err)
			}
			if s.gardener.Updates != 0 || len(s.store.Releases()) != 0 {
				t.Errorf("released after %s: %d updates, history %v", c.name, s.gardener.Updates, outcomes(s.store.Releases()))
			}
		})
	}
}

func TestALostRunLockReleasesNothing(t *testing.T) {
	s := newFakeScene(t)
	s.locker.Lost = errors.New("the lock's database session ended")
	err := s.run(t, jobs.NoDryRun, jobs.JobRelease)
	if err == nil || !strings.Contains(err.Error(), "nothing released") {
		t.Fatalf("run: %v", err)
	}
	if s.gardener.Updates != 0 {
		t.Errorf("released %d bindings without the lock", s.gardener.Updates)
	}
}

func TestNothingRunsWhileAnotherRunHoldsTheLock(t *testing.T) {
	s := newFakeScene(t)
	release := s.locker.Hold()
	defer release()
	if err := s.run(t, jobs.NoDryRun); !errors.Is(err, jobs.ErrLockHeld) {
		t.Fatalf("run: %v, want ErrLockHeld", err)
	}
	if rows, _ := s.store.Candidates(); rows != nil || s.gardener.Updates != 0 {
		t.Error("a run worked without the lock")
	}
}

func TestEachJobGetsItsOwnSettings(t *testing.T) {
	s := newFakeSceneWith(t, func(cfg *config.Config) {
		cfg.Jobs.Release.Enabled = false
		cfg.Jobs.Candidates.ReservationTTL = config.Duration{Duration: time.Minute}
	})
	if err := s.run(t, jobs.NoDryRun, jobs.JobRelease, jobs.JobCandidates); err != nil {
		t.Fatal(err)
	}
	if s.gardener.Updates != 0 || len(s.store.Releases()) != 0 {
		t.Error("release ran although release.enabled is false")
	}
	if rows, _ := s.store.Candidates(); len(rows) == 0 {
		t.Error("candidates did not run beside a disabled release")
	}
}
