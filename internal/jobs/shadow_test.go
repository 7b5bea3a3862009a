package jobs_test

import (
	"maps"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

var candidatesAndShadow = jobs.Options{Jobs: []string{jobs.JobCandidates, jobs.JobShadow}}

// KEB keeps choosing live while the table is computed beside it; every
// instance row KEB writes is compared with what the table would have
// answered at that moment, and each difference says why.
func TestShadowComparesKEBsOwnPicksWithTheTable(t *testing.T) {
	l := background(31)
	withGAS(l)
	// ga-d: d-full holds 2 of the GA's clusters and 3 other shoots, 5 in
	// all, its limit: KEB still picks it, the table does not.
	emptyBinding(l, "d-full", "ga-d")
	emptyBinding(l, "d-ok", "ga-d")
	cluster(l, "ga-d", "d-full")
	cluster(l, "ga-d", "d-full")
	cluster(l, "ga-d", "d-ok")
	for range 3 {
		l.AddShoot(landscape.ShootSpec{BindingName: "d-full", GlobalAccountID: "ga-elsewhere", Pool: aws})
	}
	s := newScene(t, l, func(c *config.Config) {
		c.HAP.MultiHyperscalerAccount = &config.MultiAccount{AllowedGlobalAccounts: []string{"*"}, Limits: config.Limits{Default: 5}}
	})
	s.mustRun(t, candidatesAndShadow)

	// KEB's own picks, live, after the table was written.
	s.insertInstance(t, "i-agree", "ga-s", "s-1")
	s.insertInstance(t, "i-drift", "ga-s", "s-2")
	s.addBinding(t, landscape.BindingSpec{Name: "s-new", Pool: aws, GlobalAccountID: "ga-s"})
	s.insertInstance(t, "i-claim", "ga-s", "s-new")
	s.insertInstance(t, "i-deviation", "ga-d", "d-full")
	// A pick two hours after the table's last rewrite: NextBinding would
	// have refused it.
	s.exec(t, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
		provisioning_parameters, created_at, updated_at) VALUES ('i-stale', 'i-stale', 'ga-d', 'd-ok', '{}', now() + interval '2 hours', now())`)
	// Not yet resolved: no binding, nothing to compare.
	s.insertInstance(t, "i-unresolved", "ga-s", "")
	s.mustRun(t, candidatesAndShadow)
	s.mustRun(t, candidatesAndShadow) // each pick is compared once

	picks, err := s.Store(t, testContext(t)).ShadowPicks(testContext(t), s.clock.Now().AddDate(0, 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]hap.ShadowResult{}
	for _, p := range picks {
		if _, twice := got[p.InstanceID]; twice {
			t.Errorf("%s compared twice", p.InstanceID)
		}
		got[p.InstanceID] = p
	}
	want := map[string]struct{ outcome, table string }{
		"i-agree":     {hap.ShadowAgree, "s-1"},
		"i-drift":     {hap.ShadowDrift, "s-1"},
		"i-claim":     {hap.ShadowClaim, "s-1"},
		"i-deviation": {hap.ShadowDeviation, "d-ok"},
		"i-stale":     {hap.ShadowStaleness, ""},
	}
	for id, w := range want {
		if r, ok := got[id]; !ok || r.Outcome != w.outcome || r.Table != w.table {
			t.Errorf("%s: %+v; want outcome %s, table %q", id, r, w.outcome, w.table)
		}
	}
	if len(got) != len(want) {
		t.Errorf("compared %d picks, want %d: %v", len(got), len(want), got)
	}
}

// withGAS gives ga-s two bindings: s-1 holds 2 clusters, s-2 one; the
// table's rank 1 is s-1.
func withGAS(l *landscape.Landscape) {
	for _, b := range []string{"s-1", "s-2"} {
		emptyBinding(l, b, "ga-s")
	}
	cluster(l, "ga-s", "s-1")
	cluster(l, "ga-s", "s-1")
	cluster(l, "ga-s", "s-2")
}

// addBinding creates a binding in the scene's namespace.
func (s *scene) addBinding(t *testing.T, spec landscape.BindingSpec) {
	t.Helper()
	s.AddBinding(t, testContext(t), spec)
}

// A pick is timed by KEB's resolve step, as KEB's event log records it,
// not by the provision request: a request queued for an hour before the
// table existed is compared with the table KEB's resolve step met.
func TestShadowTimesAPickByKEBsResolveStep(t *testing.T) {
	l := background(32)
	withGAS(l)
	s := newScene(t, l, func(c *config.Config) {
		c.HAP.MultiHyperscalerAccount = &config.MultiAccount{AllowedGlobalAccounts: []string{"*"}, Limits: config.Limits{Default: 5}}
	})
	s.mustRun(t, candidatesAndShadow)

	// One request came an hour ago, before the table was first written:
	// by the request alone the table could not have answered it. The
	// other, without events, is timed by its request, two hours after the
	// table: stale.
	for id, at := range map[string]string{"i-resolved-now": "-1 hour", "i-no-events": "2 hours"} {
		s.exec(t, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
			provisioning_parameters, created_at, updated_at) VALUES ($1, $1, 'ga-s', 's-1', '{}', now() + $2::interval, now())`, id, at)
	}
	// KEB's staged manager: the step's first run an hour ago, its retry
	// (the run that wrote the binding) now; later steps and other
	// operations do not time the pick.
	s.exec(t, `INSERT INTO operations (id, instance_id, type, created_at) VALUES
		('op-provision', 'i-resolved-now', 'provision', now() - interval '1 hour'),
		('op-update', 'i-resolved-now', 'update', now())`)
	s.exec(t, `INSERT INTO events (id, instance_id, operation_id, message, created_at) VALUES
		('e-1', 'i-resolved-now', 'op-provision', 'processing step: Resolve_Credentials_Binding', now() - interval '59 minutes'),
		('e-2', 'i-resolved-now', 'op-provision', 'step Resolve_Credentials_Binding sleeping for 10s', now()),
		('e-3', 'i-resolved-now', 'op-provision', 'processing step: Discover_Available_Zones', now() + interval '2 hours'),
		('e-4', 'i-resolved-now', 'op-update', 'processing step: Resolve_Credentials_Binding', now() + interval '2 hours')`)
	s.mustRun(t, candidatesAndShadow)

	picks, err := s.Store(t, testContext(t)).ShadowPicks(testContext(t), s.clock.Now().AddDate(0, 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range picks {
		got[p.InstanceID] = p.Outcome
	}
	want := map[string]string{"i-resolved-now": hap.ShadowAgree, "i-no-events": hap.ShadowStaleness}
	if !maps.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
