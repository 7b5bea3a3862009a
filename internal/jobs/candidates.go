package jobs

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/setting"
)

// JobCandidates names the candidates job.
const JobCandidates = "candidates"

// candidatesJob is the candidates job; its settings are the section
// candidates (Setup.Candidates).
var candidatesJob = Job{
	Name:            JobCandidates,
	Does:            "precomputes the ranked candidate table provisioning reads in one query",
	DefaultSchedule: "*/5 * * * *",
	build: func(s Setup, p Ports, pass Pass) task {
		return &candidates{Pass: pass, settings: s.Candidates, store: p.Store, metrics: p.Metrics}
	},
}

// CandidatesSettings are the candidates job's settings, the section
// candidates of the configuration file.
type CandidatesSettings struct {
	// ReservationTTL drops a reservation whose instance never showed up in
	// KEB's database with the reserved binding (failed provisioning).
	ReservationTTL setting.Duration `json:"reservationTTL"`
	// GardenerSeenEvery is how often serve proves how far the candidate
	// table has seen Gardener's bindings and stamps it
	// (candidates_computed.gardener_seen_at), so that a pick may trust a
	// table that saw Gardener a moment ago without asking Gardener; 0
	// turns the proofs off. Scheduled runs (`run`) never stamp.
	GardenerSeenEvery setting.Duration `json:"gardenerSeenEvery"`
}

func defaultCandidatesSettings() CandidatesSettings {
	return CandidatesSettings{
		ReservationTTL:    setting.Duration{Duration: time.Hour},
		GardenerSeenEvery: setting.Duration{Duration: 2 * time.Second},
	}
}

func (s CandidatesSettings) check() error {
	if s.GardenerSeenEvery.Duration < 0 {
		return setting.Invalid("candidates.gardenerSeenEvery", s.GardenerSeenEvery.String(), "must not be negative (0 turns the proofs off)")
	}
	return setting.Positive("candidates.reservationTTL", s.ReservationTTL)
}

// candidatesStore is what the candidates job needs of the database: the
// candidate table and the withdrawals.
type candidatesStore interface {
	ReplaceCandidates(ctx context.Context, rows []hap.Candidate, absorbed []string, computedAt time.Time, reservationTTL time.Duration) error
	// EndWithdrawals ends the withdrawals (provisioning.WithdrawBinding, a
	// release's retirement) made before a snapshot taken at takenAt whose
	// binding is not among dirty: that snapshot shows it cleaned, never
	// marked or gone, and the candidate rows decide again.
	EndWithdrawals(ctx context.Context, takenAt time.Time, dirty []string) (ended int, err error)
}

// candidatesMetrics is what the candidates job reports: the snapshot the
// table now comes from.
type candidatesMetrics interface {
	CandidatesComputed(snapshotAt time.Time)
}

// withdrawalSettle is how much older than the snapshot a withdrawal must be
// for the snapshot to end it. serve's snapshot comes from watch caches,
// which may trail the API server by a moment: a dirty label set just before
// KEB withdrew the binding could be missing from it.
const withdrawalSettle = time.Minute

// candidates ranks, per GA and pool, the bindings provisioning may use and
// rewrites the candidate table in one transaction, keeping the reservations
// picks made since the snapshot was taken.
type candidates struct {
	Pass
	settings CandidatesSettings
	store    candidatesStore
	metrics  candidatesMetrics
}

func (c *candidates) Run(ctx context.Context, f *Facts) error {
	// Gather: the shared snapshot, with the reservations its database read
	// already counts (f.Absorbed).

	// Decide. The runner ran no job on an implausible picture
	// (hap.Implausible), the wrong namespace that would empty the table.
	rows := f.Candidates()
	c.decided()
	if c.DryRun.KeepsKEBsTables() {
		// The table is what KEB provisions from: a dry run, perhaps with
		// a policy other than KEB's, must not change KEB's picks. Nor
		// may it drop reservations, end withdrawals or recorded claims,
		// or list KEB's instances anew, which KEB's pick reads beside it.
		c.Log.Info("dry run: the candidate table and the tables KEB reads beside it are left as they are",
			zap.Int("rows", len(rows)), zap.Int("poolsNeedingANewBinding", poolsNeedingANewBinding(rows)))
		return nil
	}

	// Act. The table is as old as the snapshot it comes from, by the
	// database's clock: the age NextBinding measures.
	if err := c.store.ReplaceCandidates(ctx, rows, f.Absorbed, f.SnapshotAt, c.settings.ReservationTTL.Duration); err != nil {
		return err
	}
	c.metrics.CandidatesComputed(f.SnapshotAt)
	ended, err := c.store.EndWithdrawals(ctx, f.SnapshotAt.Add(-withdrawalSettle), hap.DirtyBindings(f.Bindings))
	if err != nil {
		return fmt.Errorf("ending withdrawals the snapshot shows over: %w", err)
	}
	if ended > 0 {
		c.Log.Info("withdrawals ended", zap.Int("bindings", ended))
	}
	c.Log.Info("candidate table rewritten", zap.Int("rows", len(rows)), zap.Int("poolsNeedingANewBinding", poolsNeedingANewBinding(rows)))
	return nil
}

// poolsNeedingANewBinding counts the groups whose rank 1 is not selectable:
// provisioning there claims a new binding.
func poolsNeedingANewBinding(rows []hap.Candidate) int {
	full := 0
	for _, row := range rows {
		if row.Rank == 1 && !row.Selectable {
			full++
		}
	}
	return full
}
