package jobs

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// JobCandidates names the candidates job.
const JobCandidates = "candidates"

var candidatesJob = Job{
	Name:            JobCandidates,
	DefaultSchedule: "*/5 * * * *",
	run: func(ctx context.Context, w *Work, f *Facts, cfg config.Config) error {
		return w.candidates(ctx, f, cfg.Candidates)
	},
}

// withdrawalSettle is how much older than the snapshot a withdrawal must be
// for the snapshot to end it. serve's snapshot comes from watch caches,
// which may trail the API server by a moment: a dirty label set just before
// KEB withdrew the binding could be missing from it.
const withdrawalSettle = time.Minute

// candidates ranks, per GA and pool, the bindings provisioning may use and
// rewrites the candidate table in one transaction, keeping the reservations
// picks made since the snapshot was taken.
func (w *Work) candidates(ctx context.Context, f *Facts, s config.Candidates) error {
	// Gather: the shared snapshot, with the reservations its database read
	// already counts (f.Absorbed).

	// Decide.
	if why := hap.CandidatesSuspect(f.Tally); why != "" {
		return fmt.Errorf("keeping the previous candidate table: %s", why)
	}
	rows := f.Candidates()
	w.decided()

	// Act. The table is as old as the snapshot it comes from, by the
	// database's clock: the age NextBinding measures.
	if err := w.Store.ReplaceCandidates(ctx, rows, f.Absorbed, f.SnapshotAt, s.ReservationTTL.Duration); err != nil {
		return err
	}
	w.Metrics.CandidatesComputed(f.SnapshotAt)
	ended, err := w.Store.EndWithdrawals(ctx, f.SnapshotAt.Add(-withdrawalSettle), hap.DirtyBindings(f.Bindings))
	if err != nil {
		return fmt.Errorf("ending withdrawals the snapshot shows over: %w", err)
	}
	if ended > 0 {
		w.Log.Info("withdrawals ended", zap.Int("bindings", ended))
	}
	full := 0
	for _, row := range rows {
		if row.Rank == 1 && !row.Selectable {
			full++
		}
	}
	w.Log.Info("candidate table rewritten", zap.Int("rows", len(rows)), zap.Int("poolsNeedingANewBinding", full))
	return nil
}
