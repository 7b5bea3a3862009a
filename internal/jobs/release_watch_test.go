package jobs_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// laggingCache is the real Gardener port whose ListShoots answers with the
// shoots it held when frozen, as a watch cache that has not yet seen the
// newest event does. ListShootsLive still asks the API server.
type laggingCache struct {
	jobs.Gardener
	frozen []hap.Shoot
}

func (c *laggingCache) freeze(t *testing.T) {
	t.Helper()
	c.frozen = nil
	err := c.Gardener.ListShoots(testContext(t), func() { c.frozen = c.frozen[:0] }, func(s hap.Shoot) error {
		c.frozen = append(c.frozen, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (c *laggingCache) ListShoots(ctx context.Context, _ func(), fn func(hap.Shoot) error) error {
	for _, s := range c.frozen {
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}

func TestTheLastLookBeforeAReleaseAsksTheAPIServerNotTheCache(t *testing.T) {
	l := background(9)
	emptyBinding(l, "late-behind-cache", "ga-late")
	emptyBinding(l, "control", "ga-control")
	s := newScene(t, l, nil)
	cache := &laggingCache{Gardener: s.env.Runner.Gardener}
	s.env.Runner.Gardener = cache
	cache.freeze(t)
	s.mustRun(t, jobs.Options{Jobs: []string{jobs.JobRelease}})
	s.clock.Advance(61 * time.Minute)

	s.env.Runner.BeforeAct = func(job string) {
		if job == jobs.JobRelease {
			// The cache does not see this shoot: only the API server does.
			s.addShoot(t, landscape.ShootSpec{BindingName: "late-behind-cache", GlobalAccountID: "ga-late", RuntimeID: "rt-behind", Pool: aws})
		}
	}
	before := s.versions(t)
	s.mustRun(t, jobs.Options{Jobs: []string{jobs.JobRelease}})
	if slices.Contains(s.changedSince(t, before), "late-behind-cache") {
		t.Fatalf("released a binding whose shoot only the API server knew of: %v", s.labels(t, "late-behind-cache"))
	}
	if !s.released(t, "control") {
		t.Fatal("the run released nothing at all: the control binding is still claimed")
	}
}
