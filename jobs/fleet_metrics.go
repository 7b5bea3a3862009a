package jobs

import (
	"github.com/kyma-project/hap-reconciler/metrics"
)

// fleetMetrics sets the keb_ gauges and the job's own fleet series from the
// snapshot. It acts on nothing but the metrics registry.
func (r *Runner) fleetMetrics(f *Facts) error {
	r.Metrics.SetFleet(metrics.FleetOf(f.Tally, f.Candidates(r.Config.Policy()), f.Snapshot.Skipped))
	return nil
}
