package jobs

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// JobShadow names the shadow job.
const JobShadow = "shadow"

var shadowJob = Job{
	Name:            JobShadow,
	DefaultSchedule: "*/10 * * * *",
	run: func(ctx context.Context, w *Work, f *Facts, cfg config.Config) error {
		return w.shadow(ctx, f, cfg.Shadow)
	},
}

// shadow compares every instance KEB placed since its last run with what
// the candidate table would have answered at that moment, and keeps the
// verdicts: the evidence that KEB can read the table instead of choosing
// live, gathered while it still chooses live.
func (w *Work) shadow(ctx context.Context, f *Facts, s config.Shadow) error {
	// Gather: KEB's picks in the window and the table's history; the
	// snapshot's bindings say which pool each pick came from.
	since := f.SnapshotAt.Add(-s.Window.Duration)
	in, err := w.Store.ShadowInputs(ctx, since, s.MaxAge.Duration)
	if err != nil {
		return err
	}

	// Decide.
	picks, unplaced := hap.KEBPicksOf(in.Placed, f.Bindings)
	results := hap.CompareShadow(picks, in.Versions, in.Rewrites, s.MaxAge.Duration)
	w.decided()

	// Act.
	if err := w.Store.RecordShadow(ctx, results, s.Window.Duration, s.MaxAge.Duration); err != nil {
		return err
	}
	compared, err := w.Store.ShadowPicks(ctx, since)
	if err != nil {
		return fmt.Errorf("counting the compared picks: %w", err)
	}
	tally := hap.ShadowTally{}
	for _, r := range compared {
		tally[r.Outcome]++
	}
	w.Metrics.SetShadow(tally)
	for _, r := range results {
		if r.Outcome != hap.ShadowAgree {
			w.Log.Info("KEB's pick differs from the candidate table's", zap.String("instance", r.InstanceID),
				zap.String("globalAccount", r.GlobalAccountID), zap.String("pool", r.Pool.String()), zap.String("keb", r.KEBBinding),
				zap.String("table", r.Table), zap.String("outcome", r.Outcome), zap.String("detail", r.Detail))
		}
	}
	w.Log.Info("KEB's picks compared with the candidate table", zap.Int("new", len(results)),
		zap.Int("inWindow", tally.Picks()), zap.Int("agree", tally[hap.ShadowAgree]), zap.Int("unplaced", unplaced))
	return nil
}
