package reliability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

type jobsGardener = jobs.Gardener

// actorSteps is how much the actor does per trial, while runs go on.
const actorSteps = 60

// raceConfig releases a binding once it has been seen empty for the grace
// period; the runs' clock jumps a minute per run, so with gracePeriod 1m a
// binding empty in two runs in a row goes, with 0s one empty in one run.
func raceConfig(grace string) string {
	return fmt.Sprintf(`
hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    limits: {default: 2}
release: {gracePeriod: %s, mode: dirty, maxPerRun: 100, guardRatio: 1}
`, grace)
}

// fakeClock is the runs' clock: it only moves when told to.
type fakeClock struct{ unixNano atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.unixNano.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.unixNano.Add(int64(d)) }

// The invariant: no binding is ever released while a shoot or an active
// instance references it at the moment of release. Each trial runs a
// KEB-like actor concurrently with two pods' worth of runs.
func TestNoBindingIsReleasedWhileReferenced(t *testing.T) {
	testbed.Require(t)
	first := firstSeed(t)
	total := 0
	for i := range *trials {
		seed := first + uint64(i)
		var releases int
		if !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { releases = raceTrial(t, seed) }) {
			t.Fatalf("trial with seed %d failed; replay it with -reliability.seed=%d -reliability.trials=1", seed, seed)
		}
		total += releases
	}
	t.Logf("%d trials, %d releases, no violation", *trials, total)
	if *trials >= 5 && total == 0 {
		t.Fatal("no trial released anything: the harness proves nothing")
	}
}

// raceTrial runs one seeded trial and returns how many bindings were
// released in it.
func raceTrial(t *testing.T, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 7))
	grace := []string{"0s", "1m"}[rng.IntN(2)]
	l := landscape.Generate(landscape.Options{Seed: seed, GlobalAccounts: 1, ShootsPerGlobalAccount: 2, FreeBindingsPerPool: 1})
	for i := range 6 {
		l.AddBinding(landscape.BindingSpec{Name: fmt.Sprintf("race-%02d", i), Pool: hapPool(racePool)})
	}
	s := newScene(t, l, raceConfig(grace))
	w := &world{s: s}
	clock := &fakeClock{}
	clock.unixNano.Store(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixNano())

	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	var pods []*checkedRelease
	var runErrs []string
	var errMu sync.Mutex
	var wg sync.WaitGroup
	var actorDone atomic.Bool
	for range 2 {
		env := s.open(t, clock.now)
		checked := &checkedRelease{jobsGardener: env.Runner.Gardener, w: w}
		env.Runner.Gardener = checked
		pods = append(pods, checked)
		wg.Add(1)
		go func(env *app.Env) {
			defer wg.Done()
			for last := false; !last; {
				last = actorDone.Load() // one more run after the actor stopped
				clock.advance(time.Minute)
				if err := runAll(ctx, env); err != nil && !errors.Is(err, jobs.ErrLockHeld) {
					errMu.Lock()
					runErrs = append(runErrs, err.Error())
					errMu.Unlock()
				}
			}
		}(env)
	}
	a := newActor(w, seed)
	var actorErr error
	for range actorSteps {
		if actorErr = a.step(ctx); actorErr != nil {
			break
		}
	}
	actorDone.Store(true)
	wg.Wait()

	releases := 0
	var violations []string
	for _, p := range pods {
		releases += p.releases
		violations = append(violations, p.violations...)
	}
	if actorErr != nil {
		t.Errorf("the actor failed: %v", actorErr)
	}
	if len(runErrs) > 0 {
		t.Errorf("runs failed (grace %s):\n%s", grace, strings.Join(runErrs, "\n"))
	}
	if len(violations) > 0 {
		t.Errorf("grace %s: %d violation(s):\n%s\nactor log:\n%s", grace, len(violations),
			strings.Join(violations, "\n"), strings.Join(a.log, "\n"))
	}
	return releases
}
