package metrics

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Fleet is the fleet's figures of one run, ready to expose.
type Fleet struct {
	BindingsPerGA []PoolValue
	// Usage holds the shoots and instances of each binding the
	// per-binding series cover, both in one entry: at 30,000 bindings a
	// run holds this until it exits.
	Usage           []BindingUsage
	LimitPerBinding []BindingValue
	SelectablePerGA []PoolValue
	Available       []PoolValue
	Skipped         map[string]int
	Pools           []PoolSeries
}

// PoolSeries is one pool of the pool view: its bindings by state, the rules
// that lead to it, and the days until it runs out (nil: not running out).
type PoolSeries struct {
	Key   hap.PoolKey
	Rules []string
	// Unreachable: only entries naming "*" as an input lead here, so no
	// real runtime does (rules.PoolRules.Unreachable).
	Unreachable    bool
	Free           int
	Claimed        int
	Dirty          int
	SharedBindings int
	NearlyFull     int
	DaysLeft       *float64
}

// PoolValue is a figure of one pool, or of one GA in one pool.
type PoolValue struct {
	GlobalAccountID string
	Pool            hap.Pool
	Value           float64
}

// BindingValue is a figure of one binding.
type BindingValue struct {
	Binding         string
	GlobalAccountID string
	Pool            hap.Pool
	Value           float64
}

// BindingUsage is what one binding holds: its shoots in Gardener and its
// active instances in KEB's database.
type BindingUsage struct {
	Binding         string
	GlobalAccountID string
	Pool            hap.Pool
	Shoots          int
	Instances       int
}

// DriftSeries is one open drift finding.
type DriftSeries struct {
	Finding   hap.Finding
	FirstSeen time.Time
}

var (
	poolLabels    = []string{"hyperscaler_type", "eu_access"}
	gaPoolLabels  = []string{"global_account_id", "hyperscaler_type", "eu_access"}
	bindingLabels = []string{"credentials_binding", "global_account_id", "hyperscaler_type", "eu_access"}

	bindingsPerGA = prometheus.NewDesc("keb_credentials_bindings_per_ga",
		"CredentialsBindings (hyperscaler accounts) claimed by the global account in the pool.", gaPoolLabels, nil)
	shootsPerBinding = prometheus.NewDesc("keb_shoots_per_credentials_binding",
		"Shoots in Gardener that use the CredentialsBinding, those being deleted included.", bindingLabels, nil)
	available = prometheus.NewDesc("keb_available_credentials_bindings",
		"Free CredentialsBindings in the pool: those KEB's claim selector returns (no tenantName, not shared, no dirty label).", poolLabels, nil)
	instancesPerBinding = prometheus.NewDesc("hap_reconciler_instances_per_credentials_binding",
		"Active instances in KEB's database that use the CredentialsBinding.", bindingLabels, nil)
	limitPerBinding = prometheus.NewDesc("hap_reconciler_credentials_binding_limit",
		"Cluster limit of the CredentialsBinding; absent when its global account has no limit.", bindingLabels, nil)
	selectable = prometheus.NewDesc("hap_reconciler_selectable_credentials_bindings",
		"Bindings of the global account in the pool still below their limit; 0 means the next provisioning claims a new one.", gaPoolLabels, nil)
	skipped = prometheus.NewDesc("hap_reconciler_skipped_objects",
		"Objects of the last run that could not be used and were skipped.", []string{"kind"}, nil)
	poolLabels4  = []string{"hyperscaler_type", "eu_access", "shared", "rule"}
	poolBindings = prometheus.NewDesc("hap_reconciler_pool_credentials_bindings",
		"CredentialsBindings of the pool by state (free, claimed, dirty, shared), as KEB's selectors read them; rule names the hap.rule entries that lead to the pool (joined by \"; \"), empty when none does. A pool a rule names is listed with 0 even without bindings. unreachable is \"true\" when every such entry names \"*\" as an input, which KEB reads literally, so no real runtime is sent there; absent otherwise.",
		append(poolLabels4[:4:4], "state", "unreachable"), nil)
	poolNearlyFull = prometheus.NewDesc("hap_reconciler_pool_nearly_full_global_accounts",
		"Global accounts whose last selectable binding in the pool has at most a tenth of its limit left.", poolLabels4, nil)
	poolDaysLeft = prometheus.NewDesc("hap_reconciler_pool_exhaustion_days",
		"Days until the pool has no free binding at the claim rate of the last 14 days of recorded runs; absent while free bindings are not going down.", poolLabels4, nil)
	driftFinding = prometheus.NewDesc("hap_reconciler_drift_findings",
		"Open drift findings: 1 per finding.", append(bindingLabels[:4:4], "kind"), nil)
	driftFirstSeen = prometheus.NewDesc("hap_reconciler_drift_finding_first_seen_timestamp_seconds",
		"When the open drift finding was first seen.", []string{"credentials_binding", "global_account_id", "kind"}, nil)
)

type fleetCollector struct{ m *Metrics }

func (c fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{bindingsPerGA, shootsPerBinding, available, instancesPerBinding, limitPerBinding, selectable, skipped, poolBindings, poolNearlyFull, poolDaysLeft} {
		ch <- d
	}
}

func (c fleetCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.fleet.Load()
	if f == nil {
		return
	}
	pools := func(d *prometheus.Desc, vs []PoolValue, withGA bool) {
		for _, v := range vs {
			labels := []string{v.Pool.HyperscalerType, strconv.FormatBool(v.Pool.EUAccess)}
			if withGA {
				labels = append([]string{v.GlobalAccountID}, labels...)
			}
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v.Value, labels...)
		}
	}
	binding := func(d *prometheus.Desc, value float64, name, ga string, pool hap.Pool) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, value, name, ga, pool.HyperscalerType, strconv.FormatBool(pool.EUAccess))
	}
	pools(bindingsPerGA, f.BindingsPerGA, true)
	pools(selectable, f.SelectablePerGA, true)
	pools(available, f.Available, false)
	for _, u := range f.Usage {
		binding(shootsPerBinding, float64(u.Shoots), u.Binding, u.GlobalAccountID, u.Pool)
	}
	for _, u := range f.Usage {
		binding(instancesPerBinding, float64(u.Instances), u.Binding, u.GlobalAccountID, u.Pool)
	}
	for _, v := range f.LimitPerBinding {
		binding(limitPerBinding, v.Value, v.Binding, v.GlobalAccountID, v.Pool)
	}
	for kind, n := range f.Skipped {
		ch <- prometheus.MustNewConstMetric(skipped, prometheus.GaugeValue, float64(n), kind)
	}
	for _, p := range f.Pools {
		labels := []string{p.Key.HyperscalerType, strconv.FormatBool(p.Key.EUAccess), strconv.FormatBool(p.Key.Shared), strings.Join(p.Rules, "; ")}
		unreachable := "" // an empty label is no label
		if p.Unreachable {
			unreachable = "true"
		}
		states := map[string]int{"free": p.Free, "claimed": p.Claimed, "dirty": p.Dirty}
		if p.Key.Shared {
			states = map[string]int{"shared": p.SharedBindings}
		}
		for state, n := range states {
			ch <- prometheus.MustNewConstMetric(poolBindings, prometheus.GaugeValue, float64(n), append(labels[:4:4], state, unreachable)...)
		}
		if !p.Key.Shared {
			ch <- prometheus.MustNewConstMetric(poolNearlyFull, prometheus.GaugeValue, float64(p.NearlyFull), labels...)
		}
		if p.DaysLeft != nil {
			ch <- prometheus.MustNewConstMetric(poolDaysLeft, prometheus.GaugeValue, *p.DaysLeft, labels...)
		}
	}
}

type driftCollector struct{ m *Metrics }

func (c driftCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- driftFinding
	ch <- driftFirstSeen
}

func (c driftCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.m.drift.Load()
	if d == nil {
		return
	}
	for _, s := range *d {
		f := s.Finding
		ch <- prometheus.MustNewConstMetric(driftFinding, prometheus.GaugeValue, 1,
			f.BindingName, f.GlobalAccountID, f.Pool.HyperscalerType, strconv.FormatBool(f.Pool.EUAccess), string(f.Kind))
		ch <- prometheus.MustNewConstMetric(driftFirstSeen, prometheus.GaugeValue, float64(s.FirstSeen.Unix()),
			f.BindingName, f.GlobalAccountID, string(f.Kind))
	}
}
