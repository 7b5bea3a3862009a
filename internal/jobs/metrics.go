package jobs

import (
	"context"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// JobMetrics names the metrics job.
const JobMetrics = "metrics"

// metricsJob is the metrics job; it has no settings.
var metricsJob = Job{
	Name:            JobMetrics,
	Does:            "exposes the pool's metrics",
	DefaultSchedule: "*/5 * * * *",
	build: func(_ Setup, p Ports, pass Pass) task {
		return &metrics{Pass: pass, now: p.Now, store: p.Store, metrics: p.Metrics}
	},
}

// metricsStore is what the metrics job needs of the database: the pool
// history.
type metricsStore interface {
	// RecordPoolSamples appends the free and claimed bindings of every
	// dedicated pool and prunes what is older than retention.
	RecordPoolSamples(ctx context.Context, at time.Time, stats []hap.PoolStats, retention time.Duration) error
	// PoolHistory returns the samples recorded since, per pool.
	PoolHistory(ctx context.Context, since time.Time) (map[hap.Pool][]hap.PoolSample, error)
}

// metricsPort is what the metrics job reports: the run's figures,
// replaced whole.
type metricsPort interface {
	SetFleet(hap.Fleet)
}

// metrics sets the keb_ gauges and the job's own fleet series from the
// snapshot, and records every dedicated pool's free and claimed bindings in
// the pool history, from which it estimates when each pool runs out.
type metrics struct {
	Pass
	store   metricsStore
	metrics metricsPort
	now     func() time.Time
}

func (m *metrics) Run(ctx context.Context, f *Facts) error {
	// Gather: the shared snapshot and the rules; the recent pool history
	// after this run's sample is recorded.
	now := m.now()

	// Decide.
	candidates := f.Candidates()
	stats := hap.DecidePools(f.Tally, candidates)
	m.decided()

	// Act: record this run's sample first, so the estimate includes it; a
	// dry run records none and estimates from the history as it is.
	if !m.DryRun.WritesNothing() {
		if err := m.store.RecordPoolSamples(ctx, now, stats, hap.PoolHistoryRetention); err != nil {
			return err
		}
	}
	history, err := m.store.PoolHistory(ctx, now.Add(-hap.ExhaustionWindow))
	if err != nil {
		return err
	}
	fleet := hap.FleetOf(f.Tally, candidates, stats, f.Skipped)
	for _, row := range hap.BuildPoolView(stats, f.Rules, history, now) {
		fleet.Pools = append(fleet.Pools, hap.PoolFigures{
			Key: row.Key(), Rules: row.Rules, Unreachable: row.Unreachable, Free: row.Free, Claimed: row.Claimed, Dirty: row.Dirty,
			SharedBindings: row.SharedBindings, NearlyFull: len(row.NearlyFull), DaysLeft: row.DaysLeft,
		})
	}
	m.metrics.SetFleet(fleet)
	return nil
}
