package jobs

import (
	"context"

	"github.com/kyma-project/hap-reconciler/hap"
	"github.com/kyma-project/hap-reconciler/metrics"
)

// fleetMetrics sets the keb_ gauges and the job's own fleet series from the
// snapshot, and records every dedicated pool's free and claimed bindings in
// the pool history, from which it estimates when each pool runs out.
func (r *Runner) fleetMetrics(ctx context.Context, f *Facts) error {
	// Gather: the shared snapshot, the rules, the recent pool history.
	rs, err := r.Config.RuleSet()
	if err != nil {
		return err
	}
	now := r.Now()

	// Decide.
	candidates := f.Candidates(r.Config.Policy())
	stats := hap.DecidePools(f.Tally, candidates)
	r.beforeAct(JobMetrics)

	// Act: record this run's sample first, so the estimate includes it.
	if err := r.Store.RecordPoolSamples(ctx, now, stats, PoolHistoryRetention); err != nil {
		return err
	}
	history, err := r.Store.PoolHistory(ctx, now.Add(-ExhaustionWindow))
	if err != nil {
		return err
	}
	fleet := metrics.FleetOf(f.Tally, candidates, f.Snapshot.Skipped)
	for _, row := range BuildPoolView(stats, rs, history, now) {
		fleet.Pools = append(fleet.Pools, metrics.PoolSeries{
			Key: row.Key(), Rules: row.Rules, Free: row.Free, Claimed: row.Claimed, Dirty: row.Dirty,
			SharedBindings: row.SharedBindings, NearlyFull: len(row.NearlyFull), DaysLeft: row.DaysLeft,
		})
	}
	r.Metrics.SetFleet(fleet)
	return nil
}
