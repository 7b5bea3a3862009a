package differential

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/soak"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	soakDuration = flag.Duration("soak.duration", 0, "how long the soak streams KEB's actions at serve (make soak DURATION=1h); 0: the short soak of make test")
	soakOut      = flag.String("soak.out", "", "write the soak's samples and table (JSON and markdown) into this directory")
	soakCommit   = flag.String("soak.commit", "", "the commit the soak's binary was built from, for its report")
)

// soakPlan is how a soak runs: how long the stream goes on, when the fit
// starts, how often the job is sampled and a server restarted.
type soakPlan struct {
	duration, warmUp, sampleEvery, restartEvery time.Duration
	// retention is the job's retention.* and shadow history, compressed
	// as its schedules are.
	retention time.Duration
}

// shortSoak is make test's: a minute and a half of compressed time with
// one restart of kube-apiserver and one of PostgreSQL.
var shortSoak = soakPlan{duration: 90 * time.Second, warmUp: 20 * time.Second, sampleEvery: 2 * time.Second,
	restartEvery: 30 * time.Second, retention: 20 * time.Second}

// planFor is the long soak's plan for d: retentions of a thirtieth of the
// run (20 s to 2 min), a warm-up of a sixth (at most ten minutes), which
// outlives every retention and the retention step's minute, a sample
// every five seconds, a restart every tenth of the run.
func planFor(d time.Duration) soakPlan {
	return soakPlan{duration: d, warmUp: min(d/6, 10*time.Minute), sampleEvery: 5 * time.Second,
		restartEvery: d / 10, retention: min(max(d/30, 20*time.Second), 2*time.Minute)}
}

func (p soakPlan) String() string {
	return fmt.Sprintf("%s, warm-up %s, a sample every %s, a restart every %s, retentions of %s",
		p.duration, p.warmUp, p.sampleEvery, p.restartEvery, p.retention)
}

// soakConfig is the job's configuration of a soak: the stream's policy,
// every job on a schedule of seconds, and the retentions compressed alike
// (keep), so that a run of an hour sees each table through many of its
// retentions. Release runs, with a grace period of seconds.
func soakConfig(keep time.Duration) string {
	return fmt.Sprintf(`
hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: [ga-1, ga-2, ga-3, ga-4, ga-5, ga-6, ga-7]
    minBindingsForGuard: 2
    limits: {default: 3}
schedules: {drift: "@every 3s", candidates: "@every 2s", shadow: "@every 5s", release: "@every 4s", metrics: "@every 3s"}
retention: {resolvedFindings: %[1]s, releaseAudit: %[1]s, poolHistory: %[1]s}
shadow: {window: %[1]s, maxAge: 10s}
candidates: {reservationTTL: %[1]s}
release: {gracePeriod: 5s, maxPerRun: 3}
`, keep)
}

// The job as it runs for months beside KEB, in compressed time: the
// built binary's serve on the real test bed while the stream of KEB's
// actions goes on (placements through the module, claims, deprovisionings
// with KEB's free step, cleanups, operators' labels), kube-apiserver,
// gardener-apiserver and PostgreSQL restarted now and then. After every
// restart every job succeeds again; at the end the goroutines and open
// files are back within their bound of the baseline after the warm-up,
// and every table holds what docs/operations.md#what-the-tables-hold says.
// The long run (make soak) fits each series and fails on one that is not
// flat; the short one of make test logs the fit.
func TestSoak(t *testing.T) {
	testbed.Require(t)
	plan := shortSoak
	if *soakDuration > 0 {
		plan = planFor(*soakDuration)
	}
	seed := chooseSeed()
	t.Logf("seed %d, plan: %s", seed, plan)
	ctx := testbed.Context(t, plan.duration*2+20*time.Minute)
	s, _ := newStream(t, ctx, seed, soakConfig(plan.retention))
	s.soak, s.phase = true, "soak"
	job := startServe(t, ctx, s)
	run := newSoakRun(t, ctx, s, job, plan)

	run.stream()
	run.awaitBaseline()
	run.checkTables()
	report := run.report(seed)
	t.Logf("soak:\n%s", soak.Markdown(report))
	if *soakOut != "" {
		jsonPath, mdPath, err := soak.Write(*soakOut, report)
		if err != nil {
			t.Fatalf("writing the soak's results: %v", err)
		}
		t.Logf("results in %s and %s", jsonPath, mdPath)
	}
	if *soakDuration > 0 && !report.AllFlat {
		t.Errorf("not every series is flat after the warm-up:\n%s", soak.Table(report.Verdicts))
	}
	s.report(t)
}

// soakRun is one soak under way.
type soakRun struct {
	t        *testing.T
	ctx      context.Context
	s        *stream
	job      *servedJob
	plan     soakPlan
	started  time.Time
	samples  []soak.Sample
	restarts []soak.Restart
	// baseline is the most goroutines and open files of the samples after
	// the warm-up and before the first restart.
	baseline map[string]float64
	// overBound are the samples whose tables held more rows than the
	// landscape allows.
	overBound []string
}

func newSoakRun(t *testing.T, ctx context.Context, s *stream, job *servedJob, plan soakPlan) *soakRun {
	return &soakRun{t: t, ctx: ctx, s: s, job: job, plan: plan, started: time.Now(), baseline: map[string]float64{}}
}

// soakServers are restarted in turn; the short soak restarts the first two.
var soakServers = []string{serverKubeAPI, serverPostgres, serverGardenerAPI}

// stream steps KEB's actions for the plan's duration, sampling the job and
// restarting a server when each is due.
func (r *soakRun) stream() {
	t := r.t
	nextSample, nextRestart := r.started, r.started.Add(r.plan.warmUp+r.plan.restartEvery/2)
	for time.Since(r.started) < r.plan.duration || !r.restartsDone() {
		r.s.tally.Steps++
		if err := r.s.step(r.ctx); err != nil {
			r.s.dumpLog(t)
			t.Fatalf("seed %d, action %d: %v\n%s", r.s.tally.Seed, len(r.s.log), err, r.job.tail())
		}
		if now := time.Now(); !now.Before(nextSample) {
			r.sample()
			nextSample = now.Add(r.plan.sampleEvery)
		}
		if now := time.Now(); !now.Before(nextRestart) && !r.restartsDone() {
			r.restart(soakServers[len(r.restarts)%len(soakServers)])
			nextRestart = time.Now().Add(r.plan.restartEvery)
		}
	}
}

// restartsDone: the short soak has restarted kube-apiserver and
// PostgreSQL once each; a long one goes on restarting until its end.
func (r *soakRun) restartsDone() bool {
	if *soakDuration > 0 {
		return time.Since(r.started) >= r.plan.duration
	}
	return len(r.restarts) >= 2
}

// sample takes one look at the job; a look that fails (a server being
// restarted under it) is logged and skipped.
func (r *soakRun) sample() {
	sample, err := r.job.sample(r.ctx, r.s)
	if err != nil {
		r.t.Logf("sample at +%s skipped: %v", time.Since(r.started).Round(time.Second), err)
		return
	}
	r.samples = append(r.samples, sample)
	if over := tablesOverLandscape(sample.Values, len(r.s.sc.Landscape.Bindings)); over != "" {
		r.overBound = append(r.overBound, fmt.Sprintf("+%s: %s", sample.At.Sub(r.started).Round(time.Second), over))
	}
	if len(r.restarts) == 0 && sample.At.Sub(r.started) >= r.plan.warmUp {
		for _, series := range []string{soak.Goroutines, soak.OpenFDs} {
			r.baseline[series] = max(r.baseline[series], sample.Values[series])
		}
	}
}

// awaitBaseline waits until the job's goroutines and open files are back
// within their bound of the baseline, once every restart is behind it.
func (r *soakRun) awaitBaseline() {
	r.t.Helper()
	if len(r.baseline) == 0 {
		r.t.Fatalf("no sample between the warm-up and the first restart")
	}
	testbed.Eventually(r.t, 3*time.Minute, "goroutines and open files back to the baseline "+fmt.Sprint(r.baseline), func() (bool, string) {
		values, err := r.job.processValues(r.ctx)
		if err != nil {
			return false, err.Error()
		}
		for series, base := range r.baseline {
			if values[series] > base+soak.BoundOf(series).Absolute {
				return false, fmt.Sprint(values)
			}
		}
		return true, ""
	})
}

// report is the run's figures, its verdicts included.
func (r *soakRun) report(seed uint64) soak.Report {
	verdicts := soak.Judge(r.samples, r.plan.warmUp, soak.BoundOf)
	tl := r.s.tally
	return soak.Report{
		Started: r.started, Duration: r.plan.duration.String(), WarmUp: r.plan.warmUp.String(), Commit: *soakCommit,
		Machine: fmt.Sprintf("%d CPUs, %s/%s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH),
		Config:  strings.TrimSpace(soakConfig(r.plan.retention)), Restarts: r.restarts,
		Driver: map[string]int{"seed": int(seed), "steps": tl.Steps, "picks": tl.Picks, "livePlacements": tl.LivePlacements,
			"claimsFailedPoolEmpty": tl.ClaimsFailed, "withdrawalsLost": tl.WithdrawalsLost, "bindingsRetiredByOperators": tl.OperatorLabels},
		Verdicts: verdicts, Samples: r.samples, AllFlat: soak.AllFlat(verdicts),
	}
}
