package jobs

import (
	"context"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/hap"
	"github.com/kyma-project/hap-reconciler/metrics"
)

// drift compares, per binding, KEB's database with Gardener and records every
// disagreement in the drift table: findings that persist keep their
// first-seen time, findings that went away are resolved.
func (r *Runner) drift(ctx context.Context, f *Facts) error {
	// Gather: the shared snapshot is all drift needs.

	// Decide.
	findings, err := r.Findings(f)
	if err != nil {
		return err
	}
	r.beforeAct(JobDrift)

	// Act.
	opened, resolved, err := r.Store.RecordFindings(ctx, findings, r.Now())
	if err != nil {
		return err
	}
	open, err := r.Store.OpenFindings(ctx, hap.AllGlobalAccounts)
	if err != nil {
		return err
	}
	series := make([]metrics.DriftSeries, len(open))
	for i, o := range open {
		series[i] = metrics.DriftSeries{Finding: o.Finding, FirstSeen: o.FirstSeen}
		r.Log.Warn("drift",
			zap.String("binding", o.BindingName),
			zap.String("kind", string(o.Kind)),
			zap.String("globalAccount", o.GlobalAccountID),
			zap.Int("dbCount", o.DBCount),
			zap.Int("shootCount", o.ShootCount),
			zap.Int("deletingShoots", o.DeletingShoots),
			zap.Time("firstSeen", o.FirstSeen),
			zap.String("detail", o.Detail))
	}
	r.Metrics.SetDrift(series)
	r.Log.Info("drift recorded", zap.Int("open", len(open)), zap.Int("opened", opened), zap.Int("resolved", resolved))
	return nil
}

// Findings decides every drift finding of the snapshot: the disagreements
// between KEB's database, Gardener and KEB's rules of choice, and the
// bindings in pools no entry of hap.rule draws from. It writes nothing.
func (r *Runner) Findings(f *Facts) ([]hap.Finding, error) {
	rs, err := r.Config.RuleSet()
	if err != nil {
		return nil, err
	}
	p := r.Config.Policy()
	return append(hap.DecideDrift(f.Tally, p, f.Candidates(p)), rs.UnnamedPools(f.Snapshot.Bindings)...), nil
}
