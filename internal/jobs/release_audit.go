package jobs

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// A release is two writes to two systems: the label update in Gardener and
// its audit row in PostgreSQL. A run killed between them would leave a
// released account the history does not name. So an intent row goes first,
// the update second, the outcome row third; a run that finds an intent no
// outcome row settles reads the binding and records what really happened.
// Label change and history thus disagree at most until the next run.

// recordIntent writes the intent row of a release about to happen. Without
// it the update must not happen: it could end up recorded nowhere.
func (r *releasing) recordIntent(ctx context.Context, d hap.ReleaseDecision) error {
	err := r.Store.RecordRelease(ctx, hap.ReleaseRecord{
		BindingName: d.Binding.Name, GlobalAccountID: d.Binding.GlobalAccountID, Pool: d.Binding.Pool,
		Mode: r.settings.Mode, Reason: d.Reason, Outcome: hap.OutcomeIntent, At: r.Now(),
	})
	if err != nil {
		return fmt.Errorf("recording the intent to release binding %s, not released: %w", d.Binding.Name, err)
	}
	return nil
}

// settleReleaseIntents records the outcome of every release an earlier run
// began and did not record, from what the binding says now.
func (r *releasing) settleReleaseIntents(ctx context.Context) error {
	open, err := r.Store.OpenReleaseIntents(ctx)
	if err != nil {
		return fmt.Errorf("reading release intents no run settled: %w", err)
	}
	var errs []error
	for _, in := range open {
		live, err := r.Gardener.GetBinding(ctx, in.BindingName)
		var outcome, why string
		switch {
		case r.Gardener.IsNotFound(err):
			outcome, why = hap.OutcomeAborted, "the binding no longer exists"
		case err != nil:
			errs = append(errs, fmt.Errorf("settling the release begun on binding %s: %w", in.BindingName, err))
			continue
		case releaseLanded(live, in):
			outcome, why = hap.OutcomeReleased, "the run that released it ended before recording it"
		default:
			outcome, why = hap.OutcomeAborted, "the run that meant to release it ended before the update landed"
		}
		r.Log.Warn("settled a release an earlier run did not record", zap.String("binding", in.BindingName),
			zap.String("globalAccount", in.GlobalAccountID), zap.String("outcome", outcome), zap.String("why", why))
		d := hap.ReleaseDecision{
			Binding: hap.Binding{Name: in.BindingName, GlobalAccountID: in.GlobalAccountID, Pool: in.Pool},
			Reason:  fmt.Sprintf("settled: %s (intended at %s: %s)", why, in.At.UTC().Format("2006-01-02T15:04:05Z"), in.Reason),
		}
		errs = append(errs, r.audit(ctx, d, false, outcome))
	}
	return errors.Join(errs...)
}

// releaseLanded reports whether the binding shows the intended release: no
// longer claimed by the GA, or marked dirty. An intent an earlier version
// recorded with mode unclaim landed only if the claim is gone.
func releaseLanded(live hap.Binding, in hap.ReleaseRecord) bool {
	if live.GlobalAccountID != in.GlobalAccountID {
		return true
	}
	return in.Mode == config.ReleaseDirty && live.Dirty
}
