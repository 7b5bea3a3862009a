package jobs

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// JobDrift names the drift job.
const JobDrift = "drift"

// driftJob is the drift job; it has no settings.
var driftJob = Job{
	Name:            JobDrift,
	Does:            "compares KEB's database with the shoots Gardener really has, per binding",
	DefaultSchedule: "*/10 * * * *",
	build: func(_ Setup, p Ports, pass Pass) task {
		return &drift{Pass: pass, now: p.Now, store: p.Store, metrics: p.Metrics}
	},
}

// driftStore is what drift needs of the database: the drift table.
type driftStore interface {
	RecordFindings(ctx context.Context, findings []hap.Finding, now time.Time) (hap.DriftChanges, error)
	OpenFindings(ctx context.Context, ga string) ([]hap.OpenFinding, error)
}

// driftMetrics is what drift reports: the open findings.
type driftMetrics interface {
	SetDrift(open []hap.OpenFinding)
}

// drift compares, per binding, KEB's database with Gardener and records every
// disagreement in the drift table: findings that persist keep their
// first-seen time, findings that went away are resolved. It logs a finding
// when it opens and when it resolves, and each run one line of counts: at
// scale thousands of findings stay open for days, and a line for each of
// them on every run would bury the news.
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
	if d.DryRun.WritesNothing() {
		return d.dryRun(ctx, findings)
	}
	changes, err := d.store.RecordFindings(ctx, findings, d.now())
	if err != nil {
		return err
	}
	open, err := d.store.OpenFindings(ctx, hap.AllGlobalAccounts)
	if err != nil {
		return err
	}
	for _, o := range changes.Opened {
		d.Log.Warn("drift finding opened", findingFields(o)...)
	}
	for _, r := range changes.Resolved {
		d.Log.Info("drift finding resolved", append(findingFields(r.Finding),
			zap.Time("firstSeen", r.FirstSeen), zap.Time("lastSeen", r.LastSeen))...)
	}
	d.metrics.SetDrift(open)
	d.Log.Info("drift recorded", zap.Int("open", len(open)), zap.Int("opened", len(changes.Opened)),
		zap.Int("resolved", len(changes.Resolved)), zap.Any("openByKind", countByKind(open)))
	return nil
}

// dryRun says what the run would open and resolve, and records nothing:
// the history keeps every first-seen time the alerts' timers count from.
func (d *drift) dryRun(ctx context.Context, findings []hap.Finding) error {
	open, err := d.store.OpenFindings(ctx, hap.AllGlobalAccounts)
	if err != nil {
		return err
	}
	type key struct {
		binding, ga string
		kind        hap.FindingKind
	}
	decided := make(map[key]bool, len(findings))
	for _, f := range findings {
		decided[key{f.BindingName, f.GlobalAccountID, f.Kind}] = true
	}
	stillOpen := 0
	for _, o := range open {
		if decided[key{o.BindingName, o.GlobalAccountID, o.Kind}] {
			stillOpen++
		}
	}
	d.Log.Info("dry run: the drift history is left as it is", zap.Int("open", len(open)),
		zap.Int("wouldOpen", len(findings)-stillOpen), zap.Int("wouldResolve", len(open)-stillOpen))
	return nil
}

// findingFields are a finding's log fields: which binding and GA, KEB's
// count (dbCount) and Gardener's (shootCount), and the cause.
func findingFields(f hap.Finding) []zap.Field {
	return []zap.Field{
		zap.String("binding", f.BindingName),
		zap.String("globalAccount", f.GlobalAccountID),
		zap.String("hyperscalerType", f.Pool.HyperscalerType),
		zap.Bool("euAccess", f.Pool.EUAccess),
		zap.String("kind", string(f.Kind)),
		zap.Int("dbCount", f.DBCount),
		zap.Int("shootCount", f.ShootCount),
		zap.Int("deletingShoots", f.DeletingShoots),
		zap.String("detail", f.Detail),
	}
}

// countByKind counts the open findings of each kind.
func countByKind(open []hap.OpenFinding) map[string]int {
	counts := map[string]int{}
	for _, o := range open {
		counts[string(o.Kind)]++
	}
	return counts
}
