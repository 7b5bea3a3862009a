package jobs_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// Each metrics run records the pools' free and claimed bindings; claims
// between runs, a day apart on the job's clock, give the claim rate, and the
// pool view says when the pool runs out.
func TestPoolHistoryGivesTheDaysUntilAPoolRunsOut(t *testing.T) {
	l := landscape.New(31)
	gcp := hap.Pool{HyperscalerType: "gcp"}
	var free []string
	for i := range 10 {
		b := l.AddBinding(landscape.BindingSpec{Name: "gcp-free-" + string(rune('a'+i)), Pool: gcp})
		free = append(free, b.Name)
	}
	l.AddBinding(landscape.BindingSpec{Name: "gcp-taken", Pool: gcp, GlobalAccountID: "ga-0"})
	s := newScene(t, l, func(c *config.Config) {
		c.HAP.Rule = []string{"gcp", "aws(PR=cf-eu11) -> EU", "azure", "sap-converged-cloud(HR=*) -> S"}
	})
	metricsOnly := jobs.Options{Jobs: []string{jobs.JobMetrics}}
	// Two claims a day: 10, 8, 6 free over three days.
	for day := range 3 {
		if day > 0 {
			s.clock.Advance(24 * time.Hour)
			for _, name := range free[2*(day-1) : 2*day] {
				s.setLabel(t, name, hap.LabelTenantName, "ga-new")
			}
		}
		s.mustRun(t, metricsOnly)
	}
	rows, err := s.env.Reader.Pools(testContext(t), true)
	if err != nil {
		t.Fatal(err)
	}
	byPool := map[hap.PoolKey]hap.PoolRow{}
	for _, r := range rows {
		byPool[r.Key()] = r
	}
	g := byPool[hap.PoolKey{Pool: gcp}]
	if g.Free != 6 || g.Claimed != 5 || g.Samples != 3 || g.DaysLeft == nil || math.Abs(*g.DaysLeft-3) > 1e-6 || strings.Join(g.Rules, ";") != "gcp" {
		t.Fatalf("gcp pool %+v (days %v): want 6 free, 5 claimed, 3 samples, 3 days left at two a day, rule gcp", g, g.DaysLeft)
	}
	// Pools the rules name are listed even without a binding.
	for _, k := range []hap.PoolKey{{Pool: hap.Pool{HyperscalerType: "aws", EUAccess: true}}, {Pool: hap.Pool{HyperscalerType: "azure"}}} {
		if r, ok := byPool[k]; !ok || r.Free+r.Claimed != 0 || len(r.Rules) != 1 {
			t.Errorf("pool %v named by a rule: %+v, %v", k, r, ok)
		}
	}
	// The same figures as metrics, with the rule that leads there.
	if got, ok := gaugeValue(t, s, "hap_reconciler_pool_exhaustion_seconds", map[string]string{"hyperscaler_type": "gcp", "rule": "gcp"}); !ok || math.Abs(got-3*86400) > 1e-3 {
		t.Errorf("hap_reconciler_pool_exhaustion_seconds{gcp} = %v (%v), want 3 days", got, ok)
	}
	if got, ok := gaugeValue(t, s, "hap_reconciler_pool_credentials_bindings", map[string]string{"hyperscaler_type": "azure", "rule": "azure", "state": "free", "unreachable": ""}); !ok || got != 0 {
		t.Errorf("a pool a rule names without bindings: free = %v (%v), want a 0 series", got, ok)
	}
	// A pool only an entry with an input "*" names gets no real runtime:
	// listed, and labelled so that HapRulePoolWithoutBindings leaves it out.
	unreachable := byPool[hap.PoolKey{Pool: hap.Pool{HyperscalerType: "openstack"}, Shared: true}]
	if !unreachable.Unreachable || byPool[hap.PoolKey{Pool: hap.Pool{HyperscalerType: "azure"}}].Unreachable {
		t.Errorf("only the pool of sap-converged-cloud(HR=*) -> S is unreachable: %+v", rows)
	}
	if _, ok := gaugeValue(t, s, "hap_reconciler_pool_credentials_bindings", map[string]string{"hyperscaler_type": "openstack", "shared": "true", "state": "shared", "unreachable": "true"}); !ok {
		t.Error("the unreachable pool's series does not carry unreachable=\"true\"")
	}
}

// gaugeValue reads one series of the scene's registry.
func gaugeValue(t *testing.T, s *scene, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := s.env.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}
