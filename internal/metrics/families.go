package metrics

import (
	"time"

	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// view is what the fleet families are read from: the last metrics run's
// figures and the last drift run's open findings, each replaced whole.
type view struct {
	fleet *hap.Fleet
	drift []hap.OpenFinding
}

// family is one metric family of the fleet: its name, help and label names,
// and the samples it has in a view, each given with its label values in the
// order of labels. Adding a family is adding an entry to fleetFamilies (and
// its figures to hap.Fleet when they are new).
type family struct {
	name   string
	help   string
	labels []string
	// samples emits the family's samples; it is called only with the part
	// of the view it reads set.
	samples func(v view, emit func(value float64, labelValues ...string))
}

// Label names shared by several families.
var (
	poolLabels    = []string{"hyperscaler_type", "eu_access"}
	gaPoolLabels  = []string{"global_account_id", "hyperscaler_type", "eu_access"}
	bindingLabels = []string{"credentials_binding", "global_account_id", "hyperscaler_type", "eu_access"}
	poolKeyLabels = []string{"hyperscaler_type", "eu_access", "shared", "rule"}
)

// fleetFamilies are every series the fleet's figures and findings expose.
//
// Per binding (30,836 bindings at the benchmark's XL) only what a user needs
// there is exposed: Gardener's shoots, which KEB cannot know, and the open
// drift findings, which are few. KEB exports the active instances per
// binding itself (kcp_keb_v2_instances_per_credentials_binding), and a
// binding's limit follows from its provider and the allowlist alone; the
// drift finding over_limit names the bindings above it (docs/metrics.md).
var fleetFamilies = []family{
	{
		name:   "keb_credentials_bindings_per_ga",
		help:   "CredentialsBindings (hyperscaler accounts) claimed by the global account in the pool.",
		labels: gaPoolLabels,
		samples: func(v view, emit func(float64, ...string)) {
			eachPoolFigure(v, func(f *hap.Fleet) []hap.PoolFigure { return f.BindingsPerGA }, true, emit)
		},
	},
	{
		name:   "keb_shoots_per_credentials_binding",
		help:   "Shoots in Gardener that use the CredentialsBinding, those being deleted included.",
		labels: bindingLabels,
		samples: func(v view, emit func(float64, ...string)) {
			eachUsage(v, func(u hap.BindingUsage) float64 { return float64(u.Shoots) }, emit)
		},
	},
	{
		name:   "keb_available_credentials_bindings",
		help:   "Free CredentialsBindings in the pool: those KEB's claim selector returns (no tenantName, not shared, no dirty label).",
		labels: poolLabels,
		samples: func(v view, emit func(float64, ...string)) {
			eachPoolFigure(v, func(f *hap.Fleet) []hap.PoolFigure { return f.Available }, false, emit)
		},
	},
	{
		name:   "hap_reconciler_selectable_credentials_bindings",
		help:   "Bindings of the global account in the pool still below their limit; 0 means the next provisioning claims a new one.",
		labels: gaPoolLabels,
		samples: func(v view, emit func(float64, ...string)) {
			eachPoolFigure(v, func(f *hap.Fleet) []hap.PoolFigure { return f.SelectablePerGA }, true, emit)
		},
	},
	{
		name:   "hap_reconciler_skipped_objects",
		help:   "Objects of the last run that could not be used and were skipped.",
		labels: []string{"kind"},
		samples: func(v view, emit func(float64, ...string)) {
			if v.fleet == nil {
				return
			}
			for kind, n := range v.fleet.Skipped {
				emit(float64(n), kind)
			}
		},
	},
	{
		name:   "hap_reconciler_pool_credentials_bindings",
		help:   "CredentialsBindings of the pool by state (free, claimed, dirty, shared), as KEB's selectors read them; rule names the hap.rule entries that lead to the pool (joined by \"; \"), empty when none does. A pool a rule names is listed with 0 even without bindings. unreachable is \"true\" when every such entry names \"*\" as an input, which KEB reads literally, so no real runtime is sent there; absent otherwise.",
		labels: append(poolKeyLabels[:4:4], "state", "unreachable"),
		samples: func(v view, emit func(float64, ...string)) {
			eachPool(v, func(p hap.PoolFigures, labels []string) {
				unreachable := "" // an empty label is no label
				if p.Unreachable {
					unreachable = "true"
				}
				if p.Key.Shared {
					emit(float64(p.SharedBindings), append(labels, "shared", unreachable)...)
					return
				}
				emit(float64(p.Free), append(labels, "free", unreachable)...)
				emit(float64(p.Claimed), append(labels, "claimed", unreachable)...)
				emit(float64(p.Dirty), append(labels, "dirty", unreachable)...)
			})
		},
	},
	{
		name:   "hap_reconciler_pool_nearly_full_global_accounts",
		help:   "Global accounts whose last selectable binding in the pool has at most a tenth of its limit left.",
		labels: poolKeyLabels,
		samples: func(v view, emit func(float64, ...string)) {
			eachPool(v, func(p hap.PoolFigures, labels []string) {
				if !p.Key.Shared {
					emit(float64(p.NearlyFull), labels...)
				}
			})
		},
	},
	{
		name:   "hap_reconciler_pool_exhaustion_seconds",
		help:   "Seconds until the pool has no free binding at the claim rate of the last 14 days of recorded runs; absent while free bindings are not going down.",
		labels: poolKeyLabels,
		samples: func(v view, emit func(float64, ...string)) {
			eachPool(v, func(p hap.PoolFigures, labels []string) {
				if p.DaysLeft != nil {
					emit(*p.DaysLeft*(24*time.Hour).Seconds(), labels...)
				}
			})
		},
	},
	{
		name:   "hap_reconciler_drift_findings",
		help:   "Open drift findings: 1 per finding.",
		labels: append(bindingLabels[:4:4], "kind"),
		samples: func(v view, emit func(float64, ...string)) {
			for _, o := range v.drift {
				f := o.Finding
				emit(1, f.BindingName, f.GlobalAccountID, f.Pool.HyperscalerType, strconv.FormatBool(f.Pool.EUAccess), string(f.Kind))
			}
		},
	},
	{
		name:   "hap_reconciler_drift_finding_first_seen_timestamp_seconds",
		help:   "When the open drift finding was first seen.",
		labels: []string{"credentials_binding", "global_account_id", "kind"},
		samples: func(v view, emit func(float64, ...string)) {
			for _, o := range v.drift {
				emit(float64(o.FirstSeen.Unix()), o.BindingName, o.GlobalAccountID, string(o.Kind))
			}
		},
	},
}

func eachPoolFigure(v view, of func(*hap.Fleet) []hap.PoolFigure, withGA bool, emit func(float64, ...string)) {
	if v.fleet == nil {
		return
	}
	for _, p := range of(v.fleet) {
		if withGA {
			emit(p.Value, p.GlobalAccountID, p.Pool.HyperscalerType, strconv.FormatBool(p.Pool.EUAccess))
		} else {
			emit(p.Value, p.Pool.HyperscalerType, strconv.FormatBool(p.Pool.EUAccess))
		}
	}
}

func eachUsage(v view, value func(hap.BindingUsage) float64, emit func(float64, ...string)) {
	if v.fleet == nil {
		return
	}
	for _, u := range v.fleet.Usage {
		emit(value(u), u.Binding, u.GlobalAccountID, u.Pool.HyperscalerType, strconv.FormatBool(u.Pool.EUAccess))
	}
}

// eachPool gives each pool of the pool view with its poolKeyLabels values.
func eachPool(v view, fn func(p hap.PoolFigures, labels []string)) {
	if v.fleet == nil {
		return
	}
	for _, p := range v.fleet.Pools {
		fn(p, []string{p.Key.HyperscalerType, strconv.FormatBool(p.Key.EUAccess), strconv.FormatBool(p.Key.Shared), strings.Join(p.Rules, "; ")})
	}
}

// familyCollector exposes fleetFamilies from the metrics' current view.
type familyCollector struct {
	m     *Metrics
	descs []*prometheus.Desc
}

func newFamilyCollector(m *Metrics) familyCollector {
	c := familyCollector{m: m}
	for _, f := range fleetFamilies {
		c.descs = append(c.descs, prometheus.NewDesc(f.name, f.help, f.labels, nil))
	}
	return c
}

func (c familyCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c familyCollector) Collect(ch chan<- prometheus.Metric) {
	v := c.m.current()
	for i, f := range fleetFamilies {
		desc := c.descs[i]
		f.samples(v, func(value float64, labelValues ...string) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, value, labelValues...)
		})
	}
}
