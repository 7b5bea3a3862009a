package jobs

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// JobDrift names the drift job.
const JobDrift = "drift"

var driftJob = Job{
	Name:            JobDrift,
	DefaultSchedule: "*/10 * * * *",
	Configure: func(Settings) Build {
		return func(p Ports, pass Pass) Task {
			return &drift{Pass: pass, store: p.Store, metrics: p.Metrics, now: p.Now}
		}
	},
}

// driftStore is what drift needs of the database: the drift table.
type driftStore interface {
	RecordFindings(ctx context.Context, findings []hap.Finding, now time.Time) (opened, resolved int, err error)
	OpenFindings(ctx context.Context, ga string) ([]hap.OpenFinding, error)
}

// driftMetrics is what drift reports: the open findings.
type driftMetrics interface {
	SetDrift(open []hap.OpenFinding)
}

// drift compares, per binding, KEB's database with Gardener and records every
// disagreement in the drift table: findings that persist keep their
// first-seen time, findings that went away are resolved.
type drift struct {
	Pass
	store   driftStore
	metrics driftMetrics
	now     func() time.Time
}

func (d *drift) Run(ctx context.Context, f *Facts) error {
	// Gather: the shared snapshot is all drift needs.

	// Decide.
	findings := f.Findings()
	d.decided()

	// Act.
	opened, resolved, err := d.store.RecordFindings(ctx, findings, d.now())
	if err != nil {
		return err
	}
	open, err := d.store.OpenFindings(ctx, hap.AllGlobalAccounts)
	if err != nil {
		return err
	}
	for _, o := range open {
		d.Log.Warn("drift",
			zap.String("binding", o.BindingName),
			zap.String("kind", string(o.Kind)),
			zap.String("globalAccount", o.GlobalAccountID),
			zap.Int("dbCount", o.DBCount),
			zap.Int("shootCount", o.ShootCount),
			zap.Int("deletingShoots", o.DeletingShoots),
			zap.Time("firstSeen", o.FirstSeen),
			zap.String("detail", o.Detail))
	}
	d.metrics.SetDrift(open)
	d.Log.Info("drift recorded", zap.Int("open", len(open)), zap.Int("opened", opened), zap.Int("resolved", resolved))
	return nil
}
