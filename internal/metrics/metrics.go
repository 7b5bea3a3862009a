// Package metrics exposes what the jobs saw and did as Prometheus metrics:
// the keb_ gauges KEB's dashboards know, the job's own hap_reconciler_
// series, and job health.
package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Metrics owns a registry of its own, so `run` pushes exactly the job's
// series to a Pushgateway and `serve` exposes them with the Go runtime's.
type Metrics struct {
	Registry *prometheus.Registry

	fleet atomic.Pointer[hap.Fleet]
	drift atomic.Pointer[[]hap.OpenFinding]

	lastSuccess  *prometheus.GaugeVec
	lastFailure  *prometheus.GaugeVec
	duration     *prometheus.GaugeVec
	failures     *prometheus.CounterVec
	releases     *prometheus.CounterVec
	guardTripped prometheus.Counter
	pushFailures prometheus.Counter
	// implausible is 1 while the latest run refused its picture: a gauge,
	// not a counter, so the alert fires on the first refusal a CronJob
	// pushes (a counter first pushed at 1 shows no increase).
	implausible prometheus.Gauge
	// candidatesSnapshot is set once a candidates run has written the
	// table: absent, not zero, until then.
	candidatesSnapshot *prometheus.GaugeVec
	shadowPicks        *prometheus.GaugeVec
	// The proofs of how far the candidate table has seen Gardener (serve
	// only): absent until serve proves or stamps.
	gardenerSeenProbes *prometheus.CounterVec
	gardenerSeenProved *prometheus.GaugeVec
	gardenerSeenAge    *sinceCollector
	// tableRows is every table's rows as the latest run counted them.
	tableRows *prometheus.GaugeVec
	// schemaVersion and kebModuleReads say where the job's schema stands
	// and whether the module KEB pins reads it, as the process found at
	// start: only migrate and its rollback move the schema, around a
	// release of the job. Absent, not zero, until read.
	schemaVersion  *prometheus.GaugeVec
	kebModuleReads *prometheus.GaugeVec
}

// New registers every series on a fresh registry.
func New() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hap_reconciler_job_last_success_timestamp_seconds",
		Help: "When the job last finished without error.",
	}, []string{"job_name"})
	m.lastFailure = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hap_reconciler_job_last_failure_timestamp_seconds",
		Help: "When the job last failed.",
	}, []string{"job_name"})
	m.duration = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hap_reconciler_job_duration_seconds",
		Help: "How long the last run of the job took.",
	}, []string{"job_name"})
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hap_reconciler_job_failures_total",
		Help: "Runs of the job that failed.",
	}, []string{"job_name"})
	m.releases = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hap_reconciler_releases_total",
		Help: "Release attempts by mode and outcome (released, would_release, conflict, aborted).",
	}, []string{"mode", "outcome"})
	m.guardTripped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hap_reconciler_release_guard_tripped_total",
		Help: "Release runs that released nothing because the database and Gardener disagreed too much.",
	})
	m.pushFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hap_reconciler_pushgateway_failures_total",
		Help: "Pushes to the Pushgateway that failed.",
	})
	m.implausible = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hap_reconciler_picture_implausible",
		Help: "1 when the latest run refused its picture as implausible (the namespace lists no binding, or far fewer than KEB's database uses) and changed nothing; 0 when it believed it.",
	})
	m.candidatesSnapshot = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: candidatesSnapshotName,
		Help: "When the snapshot the candidate table was last computed from was taken, by the database's clock: the table's age, as provisioning.NextBinding measures it, is the time since.",
	}, nil)
	m.shadowPicks = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hap_reconciler_shadow_picks",
		Help: "KEB's picks of the shadow window (shadow.window) compared with the candidate table's answer at that moment, by outcome: agree, deviation, claim, drift, staleness.",
	}, []string{"outcome"})
	m.gardenerSeenProbes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hap_reconciler_gardener_seen_probes_total",
		Help: "serve's proofs of how far the candidate table has seen Gardener's bindings, by outcome: stamped, table_behind (a rewrite is still to take in a change), table_not_ours (the table is no rewrite of serve's watch), list_failed, watch_behind, database_failed.",
	}, []string{"outcome"})
	m.gardenerSeenProved = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hap_reconciler_gardener_seen_proved_timestamp_seconds",
		Help: "The database's time of serve's newest proof that its watch held every change Gardener committed to the bindings before it, stamped on the candidate table or not.",
	}, nil)
	m.gardenerSeenAge = &sinceCollector{desc: prometheus.NewDesc("hap_reconciler_gardener_seen_age_seconds",
		"Seconds since the time serve last stamped on the candidate table as seen in Gardener (candidates_computed.gardener_seen_at), as serve counts them: what a pick compares with its bound before it trusts the table without asking Gardener.",
		nil, nil)}
	m.tableRows = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hap_reconciler_table_rows",
		Help: "Rows of each table of the job's schema, counted at the end of the latest run, after its retention step pruned what retention.* and shadow.window say nothing needs (docs/operations.md#what-the-tables-hold).",
	}, []string{"table"})
	m.schemaVersion = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hap_reconciler_schema_version",
		Help: "The version golang-migrate records for the job's schema, as the process read it at start.",
	}, nil)
	m.kebModuleReads = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hap_reconciler_keb_module_reads_schema",
		Help: "1 when the provisioning module KEB pins (kebModule.schemaOldest to schemaNewest) reads the job's schema at its version, 0 when it does not and every pick goes to KEB's live path (ErrSchemaSkew).",
	}, nil)
	m.Registry.MustRegister(m.schemaVersion, m.kebModuleReads, m.tableRows, m.lastSuccess, m.lastFailure, m.duration, m.failures,
		m.releases, m.guardTripped, m.pushFailures, m.implausible, m.candidatesSnapshot, m.shadowPicks,
		m.gardenerSeenProbes, m.gardenerSeenProved, m.gardenerSeenAge, newFamilyCollector(m))
	return m
}

// JobDone records the outcome of one job run.
func (m *Metrics) JobDone(job string, took time.Duration, err error, now time.Time) {
	m.duration.WithLabelValues(job).Set(took.Seconds())
	if err != nil {
		m.failures.WithLabelValues(job).Inc()
		m.lastFailure.WithLabelValues(job).Set(float64(now.Unix()))
		return
	}
	m.failures.WithLabelValues(job).Add(0) // the series exists from the first run on
	m.lastSuccess.WithLabelValues(job).Set(float64(now.Unix()))
}

// PictureImplausible records whether the run refused its picture.
func (m *Metrics) PictureImplausible(refused bool) {
	if refused {
		m.implausible.Set(1)
		return
	}
	m.implausible.Set(0)
}

// Release counts one release attempt.
func (m *Metrics) Release(mode, outcome string) { m.releases.WithLabelValues(mode, outcome).Inc() }

// CandidatesComputed records the time of the snapshot the candidate table
// now comes from.
func (m *Metrics) CandidatesComputed(snapshotAt time.Time) {
	m.candidatesSnapshot.WithLabelValues().Set(float64(snapshotAt.UnixMilli()) / 1000)
}

// GardenerSeenOutcomes exposes each outcome of the proofs at 0, so a rate
// over them is defined from the start.
func (m *Metrics) GardenerSeenOutcomes(outcomes []string) {
	for _, o := range outcomes {
		m.gardenerSeenProbes.WithLabelValues(o).Add(0)
	}
}

// GardenerSeenProbe counts one proof by its outcome.
func (m *Metrics) GardenerSeenProbe(outcome string) {
	m.gardenerSeenProbes.WithLabelValues(outcome).Inc()
}

// GardenerSeenProved records the database's time of the newest proof.
func (m *Metrics) GardenerSeenProved(at time.Time) {
	m.gardenerSeenProved.WithLabelValues().Set(float64(at.UnixMilli()) / 1000)
}

// GardenerSeenStamped records that the stamp now written was read from the
// database's clock at since (this process's clock): the stamp's age is
// the time since.
func (m *Metrics) GardenerSeenStamped(since time.Time) { m.gardenerSeenAge.since.Store(&since) }

// sinceCollector exposes the seconds since a moment, once there is one.
type sinceCollector struct {
	desc  *prometheus.Desc
	since atomic.Pointer[time.Time]
}

func (c *sinceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *sinceCollector) Collect(ch chan<- prometheus.Metric) {
	if at := c.since.Load(); at != nil {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, time.Since(*at).Seconds())
	}
}

// SetShadow replaces the counts of compared picks; every outcome is
// exposed, 0 included, so a ratio over them is defined from the first run.
func (m *Metrics) SetShadow(tally map[string]int) {
	m.shadowPicks.Reset()
	for _, outcome := range hap.ShadowOutcomes {
		m.shadowPicks.WithLabelValues(outcome).Set(float64(tally[outcome]))
	}
}

// SchemaSeen records the job's schema version and whether KEB's pinned
// module reads it.
func (m *Metrics) SchemaSeen(version uint, kebModuleReads bool) {
	m.schemaVersion.WithLabelValues().Set(float64(version))
	m.kebModuleReads.WithLabelValues().Set(map[bool]float64{false: 0, true: 1}[kebModuleReads])
}

// SetTableRows replaces every table's row count.
func (m *Metrics) SetTableRows(rows map[string]int64) {
	m.tableRows.Reset()
	for table, n := range rows {
		m.tableRows.WithLabelValues(table).Set(float64(n))
	}
}

// GuardTripped counts a release run stopped by the global guard.
func (m *Metrics) GuardTripped() { m.guardTripped.Inc() }

// PushFailed counts a failed push to the Pushgateway.
func (m *Metrics) PushFailed() { m.pushFailures.Inc() }

// SetFleet replaces every fleet series at once: series of bindings or GAs
// that disappeared are gone, and a scrape never sees half of two runs.
func (m *Metrics) SetFleet(f hap.Fleet) { m.fleet.Store(&f) }

// SetDrift replaces every drift series at once with the open findings.
func (m *Metrics) SetDrift(open []hap.OpenFinding) { m.drift.Store(&open) }

// current is the view the fleet families read.
func (m *Metrics) current() view {
	v := view{fleet: m.fleet.Load()}
	if d := m.drift.Load(); d != nil {
		v.drift = *d
	}
	return v
}
