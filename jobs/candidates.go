package jobs

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/hap"
)

// candidates ranks, per GA and pool, the bindings provisioning may use and
// rewrites the candidate table in one transaction, keeping the reservations
// picks made since the snapshot was taken.
func (r *Runner) candidates(ctx context.Context, f *Facts) error {
	// Gather: the shared snapshot, with the reservations its database read
	// already counts (f.Absorbed).

	// Decide.
	if why := hap.CandidatesSuspect(f.Tally); why != "" {
		return fmt.Errorf("keeping the previous candidate table: %s", why)
	}
	rows := f.Candidates(r.Config.Policy())
	r.beforeAct(JobCandidates)

	// Act.
	if err := r.Store.ReplaceCandidates(ctx, rows, f.Absorbed, r.Now(), r.Config.Candidates.ReservationTTL.Duration); err != nil {
		return err
	}
	full := 0
	for _, row := range rows {
		if row.Rank == 1 && !row.Selectable {
			full++
		}
	}
	r.Log.Info("candidate table rewritten", zap.Int("rows", len(rows)), zap.Int("poolsNeedingANewBinding", full))
	return nil
}
