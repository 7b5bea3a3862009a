package jobs

import (
	"context"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// JobMetrics names the metrics job.
const JobMetrics = "metrics"

var metricsJob = Job{
	Name:            JobMetrics,
	DefaultSchedule: "*/5 * * * *",
	run:             func(ctx context.Context, w *Work, f *Facts, _ config.Config) error { return w.fleetMetrics(ctx, f) },
}

// fleetMetrics sets the keb_ gauges and the job's own fleet series from the
// snapshot, and records every dedicated pool's free and claimed bindings in
// the pool history, from which it estimates when each pool runs out.
func (w *Work) fleetMetrics(ctx context.Context, f *Facts) error {
	// Gather: the shared snapshot and the rules; the recent pool history
	// after this run's sample is recorded.
	now := w.Now()

	// Decide.
	candidates := f.Candidates()
	stats := hap.DecidePools(f.Tally, candidates)
	w.decided()

	// Act: record this run's sample first, so the estimate includes it.
	if err := w.Store.RecordPoolSamples(ctx, now, stats, hap.PoolHistoryRetention); err != nil {
		return err
	}
	history, err := w.Store.PoolHistory(ctx, now.Add(-hap.ExhaustionWindow))
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
	w.Metrics.SetFleet(fleet)
	return nil
}
