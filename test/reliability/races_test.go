package reliability

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

// actorSteps is the least the actor does per trial; it goes on until the
// trial has had minFaults faults.
const (
	actorSteps = 60
	minFaults  = 3
)

// minTrialsThatRelease is the least number of trials of which at least one
// must release something (about 8 releases a trial on average).
const minTrialsThatRelease = 20

// raceRequestTimeout is the job's per-request bound in the trials: short,
// so a run caught by a fault gives up quickly and the next one starts.
const raceRequestTimeout = 2 * time.Second

// raceConfig releases a binding once it has been seen empty for the grace
// period, on the real clock.
func raceConfig(grace string) string {
	return fmt.Sprintf(`
hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    limits: {default: 2}
gardener: {requestTimeout: %s}
release: {gracePeriod: %s, mode: dirty, maxPerRun: 100, guardRatio: 1}
`, raceRequestTimeout, grace)
}

// trialCounts is what one trial did.
type trialCounts struct {
	releases int
	faults   map[string]int
	fired    map[string]int // aimed faults that found a release to hit
	runs     int            // of the binary
	kills    int            // of the binary, aimed or not
}

// The race suite: a KEB-like actor works on a pool while two in-process
// pods and the built binary run every job back to back, sharing the run
// lock, with release on, and faults hit every 0.6 to 2.5 s: PostgreSQL
// restarted, the API server restarted, killed or paused, connections cut
// mid-stream in both directions, the binary killed, and faults aimed
// between a release's intent row and its update. Each trial checks:
//
//   - no release over a reference: every release the API server applied
//     was witnessed by the proxy with the actor held still (invariant 1);
//   - the audit is exact: each applied release has exactly one `released`
//     row naming its intent, no other `released` row exists, every binding
//     marked by a release has that row, and no intent stays open after
//     clean runs (invariant 4);
//   - recovery: the first run after the last fault exits 0 (invariant 7);
//   - no hang: every wait is bounded by a context, so a hang fails the
//     trial with its seed instead of stalling the suite (invariant 6).
func TestRacesUnderFaults(t *testing.T) {
	testbed.Require(t)
	first := firstSeed(t)
	started := time.Now()
	total := trialCounts{faults: map[string]int{}, fired: map[string]int{}}
	for i := range *trials {
		seed := first + uint64(i)
		var c trialCounts
		if !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { c = raceTrial(t, seed) }) {
			t.Fatalf("trial with seed %d failed; replay it with -run TestRacesUnderFaults -reliability.seed=%d -reliability.trials=1", seed, seed)
		}
		total.releases += c.releases
		total.runs += c.runs
		total.kills += c.kills
		for k, n := range c.faults {
			total.faults[k] += n
		}
		for k, n := range c.fired {
			total.fired[k] += n
		}
	}
	t.Log(summary(*trials, total, time.Since(started)))
	// A few trials can all draw races that release nothing (seeds 164574
	// to 164576 do); over a long run that would mean the suite proves
	// nothing.
	if *trials >= minTrialsThatRelease && total.releases == 0 {
		t.Fatal("no trial released anything: the suite proves nothing")
	}
}

func summary(trials int, c trialCounts, took time.Duration) string {
	var b strings.Builder
	faults := 0
	for _, n := range c.faults {
		faults += n
	}
	fmt.Fprintf(&b, "%d trials, %d releases, %d faults, 0 violations, %s (%s per trial); binary runs %d, killed %d\nfaults by kind:\n",
		trials, c.releases, faults, took.Round(time.Second), (took / time.Duration(max(trials, 1))).Round(100*time.Millisecond), c.runs, c.kills)
	kinds := slices.Sorted(maps.Keys(c.faults))
	for _, k := range kinds {
		fired := ""
		if slices.Contains(aimedFaults, k) || k == cutReply || k == cutRequest {
			fired = fmt.Sprintf(" (%d hit a request)", c.fired[k])
		}
		fmt.Fprintf(&b, "  %-58s %5d%s\n", k, c.faults[k], fired)
	}
	return b.String()
}

// raceTrial runs one seeded trial.
func raceTrial(t *testing.T, seed uint64) trialCounts {
	rng := rand.New(rand.NewPCG(seed, 7))
	grace := []string{"0s", "1s"}[rng.IntN(2)]
	l := landscape.Generate(landscape.Options{Seed: seed, GlobalAccounts: 1, ShootsPerGlobalAccount: 2, FreeBindingsPerPool: 1})
	for i := range 6 {
		l.AddBinding(landscape.BindingSpec{Name: fmt.Sprintf("race-%02d", i), Pool: hapPool(racePool)})
	}
	s := newScene(t, l, raceConfig(grace))
	w := &world{s: s}
	ctx := testContext(t)

	db := newTCPProxy(t, fmt.Sprintf("127.0.0.1:%d", bed.Postgres.Port()))
	pod := newBinaryPod(t, s, db)
	api := newAPIProxy(t, w, pod)
	pod.pointAt(t, api)
	var pods []*inProcessPod
	for range 2 {
		env := s.Open(t, ctx, testscene.Wiring{Now: time.Now, Log: quietLog, RESTConfig: api.config(), DatabaseURL: pod.dbURL})
		pods = append(pods, &inProcessPod{env: env})
	}

	stopPods := startPods(ctx, pods, pod)
	inj := newInjector(seed, api, db, pod)
	stopFaults := inj.start(ctx)
	a := newActor(w, seed)
	steps, failed := 0, 0
	for ; steps < actorSteps || inj.total() < minFaults; steps++ {
		stepCtx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := a.step(stepCtx); err != nil {
			failed++ // KEB fails too while a server is away
			a.note("step failed: %v", err)
		}
		cancel()
	}
	stopFaults()
	api.disarm()
	stopPods()
	for _, err := range inj.errs {
		t.Errorf("seed %d: injecting a fault: %v", seed, err)
	}

	s.reconnect(t)
	s.Reconnect()
	s.waitForRunLockFree(t)
	if code, out := pod.run(ctx); code != 0 {
		t.Errorf("seed %d: the first run after the last fault exited %d:\n%s", seed, code, out)
	}
	s.settleEveryIntent(t, pod)

	if len(api.violations) > 0 {
		t.Errorf("seed %d (grace %s): %d violation(s):\n%s\nactor log:\n%s", seed, grace, len(api.violations),
			strings.Join(api.violations, "\n"), strings.Join(a.log, "\n"))
	}
	s.checkAuditExact(t, seed, api)
	if failed == steps {
		t.Errorf("seed %d: all %d steps of the actor failed: the trial raced nothing\nactor log:\n%s", seed, steps, strings.Join(a.log, "\n"))
	}
	return trialCounts{releases: api.releases(), faults: inj.counts, fired: api.fired, runs: pod.runs, kills: pod.kills}
}

// settleEveryIntent runs the job again while intents are open: the first
// clean run settles every intent a fault left open, so a second is needed
// only if the first released something and a third never.
func (s *scene) settleEveryIntent(t *testing.T, pod *binaryPod) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		open, err := s.Store(t, testContext(t)).OpenReleaseIntents(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(open) == 0 {
			return
		}
		if attempt > 2 {
			t.Errorf("intents still open after %d clean runs: %+v", attempt, open)
			return
		}
		if code, out := pod.run(testContext(t)); code != 0 {
			t.Errorf("a clean run settling intents exited %d:\n%s", code, out)
		}
	}
}

// checkAuditExact: the applied releases the proxy witnessed and the
// `released` rows are the same, intent for intent; every binding a release
// marked that is still dirty has its row.
func (s *scene) checkAuditExact(t *testing.T, seed uint64, api *apiProxy) {
	t.Helper()
	rows := map[string][]string{}
	released := map[string]bool{}
	for _, r := range s.releaseHistory(t) {
		if r.Outcome == hap.OutcomeReleased {
			id := strconv.FormatInt(r.IntentID, 10)
			rows[r.BindingName] = append(rows[r.BindingName], id)
			released[id] = true
		}
	}
	api.mu.Lock()
	landed := maps.Clone(api.landed)
	api.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(mergeKeys(rows, landed))) {
		got, want := sorted(rows[name]), sorted(landed[name])
		if !slices.Equal(got, want) {
			t.Errorf("seed %d: binding %s: released rows name intents %v, the API server applied releases %v", seed, name, got, want)
		}
	}
	list, err := s.Bindings.List(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range list.Items {
		mark := b.GetAnnotations()[hap.AnnotationRelease]
		if mark != "" && b.GetLabels()[hap.LabelDirty] == "true" && !released[mark] {
			t.Errorf("seed %d: binding %s is dirty and marked by release %s, which has no released row", seed, b.GetName(), mark)
		}
	}
}

func mergeKeys(a, b map[string][]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}
