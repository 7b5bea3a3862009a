package jobs

import (
	"context"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// JobDrift names the drift job.
const JobDrift = "drift"

var driftJob = Job{
	Name:            JobDrift,
	DefaultSchedule: "*/10 * * * *",
	run:             func(ctx context.Context, w *Work, f *Facts, _ config.Config) error { return w.drift(ctx, f) },
}

// drift compares, per binding, KEB's database with Gardener and records every
// disagreement in the drift table: findings that persist keep their
// first-seen time, findings that went away are resolved.
func (w *Work) drift(ctx context.Context, f *Facts) error {
	// Gather: the shared snapshot is all drift needs.

	// Decide.
	findings := Findings(f)
	w.decided()

	// Act.
	opened, resolved, err := w.Store.RecordFindings(ctx, findings, w.Now())
	if err != nil {
		return err
	}
	open, err := w.Store.OpenFindings(ctx, hap.AllGlobalAccounts)
	if err != nil {
		return err
	}
	for _, o := range open {
		w.Log.Warn("drift",
			zap.String("binding", o.BindingName),
			zap.String("kind", string(o.Kind)),
			zap.String("globalAccount", o.GlobalAccountID),
			zap.Int("dbCount", o.DBCount),
			zap.Int("shootCount", o.ShootCount),
			zap.Int("deletingShoots", o.DeletingShoots),
			zap.Time("firstSeen", o.FirstSeen),
			zap.String("detail", o.Detail))
	}
	w.Metrics.SetDrift(open)
	w.Log.Info("drift recorded", zap.Int("open", len(open)), zap.Int("opened", opened), zap.Int("resolved", resolved))
	return nil
}

// Findings decides every drift finding of the facts: the disagreements
// between KEB's database, Gardener and KEB's rules of choice, and the
// bindings in pools no entry of hap.rule draws from. It writes nothing.
func Findings(f *Facts) []hap.Finding {
	return append(hap.DecideDrift(f.Tally, f.Policy, f.Candidates()), f.Rules.UnnamedPools(f.Bindings)...)
}
