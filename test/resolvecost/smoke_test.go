package resolvecost

import (
	"slices"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/bench"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// TestResolveCostSmoke runs the measurement's cells on a tiny landscape
// and checks what each path picked, never how long it took: every pick a
// binding of the request's pool (the GA's own in a dedicated pool, a shared
// one in the shared pool), no error and no fall-back to the live path; and
// on the fresh table, before any pick changed the counts, the adopted
// step's binding is the one KEB's live path chooses.
func TestResolveCostSmoke(t *testing.T) {
	ctx := testbed.Context(t, 5*time.Minute)
	l := bench.Generate(bench.Size{Name: "smoke", Shoots: 60}, 3)
	w := load(t, ctx, "rc-smoke", l)
	dedicated, shared := requests(l, false, 40, 3), requests(l, true, 10, 3)
	if len(dedicated) == 0 || len(shared) == 0 {
		t.Fatalf("the landscape holds %d dedicated and %d shared requests; want both", len(dedicated), len(shared))
	}
	if err := w.computeTable(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range dedicated[:8] {
		want, err := w.keb.Dedicated(ctx, r.ga, r.pool)
		if err != nil {
			t.Fatal(err)
		}
		s, err := w.pick(ctx, pathTable, r, false)
		if err != nil || s.err != nil {
			t.Fatalf("%s in %s: %v, %v", r.ga, r.pool, err, s.err)
		}
		if s.binding != want.Binding || s.claimNew != want.ClaimNew {
			t.Errorf("%s in %s: the adopted step picked %q (claim new %t), KEB's live path %s on %v", r.ga, r.pool, s.binding, s.claimNew, want.Decision, want.Seen)
		}
	}
	for _, spec := range []cellSpec{
		{workers: 1, rounds: 4},
		{workers: 3, rounds: 2},
		{shared: true, workers: 1, rounds: 2},
		{shared: true, workers: 2, rounds: 1},
	} {
		reqs := dedicated
		if spec.shared {
			reqs = shared
		}
		run, err := w.runCell(ctx, spec, reqs)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(run.samples), spec.workers*spec.rounds*paths; got != want {
			t.Errorf("%s pool, %d workers: %d picks, want %d", spec.poolKind(), spec.workers, got, want)
		}
		if a, b, overlap := pathsOverlap(run.samples); overlap {
			t.Errorf("%s pool, %d workers: a pick of %s overlapped one of %s; each path must be timed with the other workers on the same path", spec.poolKind(), spec.workers, pathNames[a.path], pathNames[b.path])
		}
		for _, s := range run.samples {
			r := s.req
			if s.err != nil || s.fellBack || s.binding == "" {
				t.Errorf("%s pool, %s: binding %q, fell back %t, error %v", spec.poolKind(), pathNames[s.path], s.binding, s.fellBack, s.err)
				continue
			}
			selector := kebrules.SharedSelector(r.pool)
			if !spec.shared {
				selector = kebrules.TenantSelector(r.pool, r.ga)
			}
			items, err := w.keb.List(ctx, selector)
			if err != nil {
				t.Fatal(err)
			}
			names := make([]string, len(items))
			for k, it := range items {
				names[k] = it.GetName()
			}
			if !slices.Contains(names, s.binding) {
				t.Errorf("%s pool, %s picked %q for %s, not one of %v (%s)", spec.poolKind(), pathNames[s.path], s.binding, r.ga, names, selector)
			}
		}
	}
}

// pathsOverlap finds two picks of different paths whose timed parts
// overlapped.
func pathsOverlap(samples []sample) (a, b sample, found bool) {
	for i, x := range samples {
		for _, y := range samples[i+1:] {
			if x.path != y.path && x.began.Before(y.began.Add(y.took)) && y.began.Before(x.began.Add(x.took)) {
				return x, y, true
			}
		}
	}
	return sample{}, sample{}, false
}
