package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// A release is two writes to two systems: the label update in Gardener and
// its audit row in PostgreSQL. A run killed between them, or one that never
// hears the API server's answer, would leave a released account the history
// does not name. So an intent row goes first, the update second, the
// outcome row, naming the intent, third. The update carries the intent's ID
// as an annotation (hap.AnnotationRelease), set in the same write as the
// dirty label: the account-cleanup process removes dirty and tenantName but
// leaves annotations alone, so the annotation tells a release that landed
// from one that did not even after the binding was cleaned and claimed
// again. Whoever cannot tell what came of an update (the run itself, after
// a lost answer; or a later run) reads the binding and records what really
// happened. Label change and history thus disagree at most until the next
// run.

// recordIntent writes the intent row of a release about to happen and
// returns it with its ID. Without it the update must not happen: it could
// end up recorded nowhere.
func (r *release) recordIntent(ctx context.Context, d hap.ReleaseDecision) (hap.ReleaseRecord, error) {
	in := hap.ReleaseRecord{
		BindingName: d.Binding.Name, GlobalAccountID: d.Binding.GlobalAccountID, Pool: d.Binding.Pool,
		Mode: r.settings.Mode, Reason: d.Reason, Outcome: hap.OutcomeIntent, ResourceVersion: d.Binding.ResourceVersion,
	}
	id, err := r.store.RecordRelease(ctx, in)
	if err != nil {
		return in, fmt.Errorf("recording the intent to release binding %s, not released: %w", d.Binding.Name, err)
	}
	in.ID = id
	return in, nil
}

// releaseID is the annotation's value naming the intent.
func releaseID(intentID int64) string { return strconv.FormatInt(intentID, 10) }

// settleReleaseIntents records the outcome of every release an earlier run
// began and did not record, from what the binding says now. Any failure to
// settle one stops the run's releases, so no later release of a binding
// overtakes its open intent.
func (r *release) settleReleaseIntents(ctx context.Context) error {
	open, err := r.store.OpenReleaseIntents(ctx)
	if err != nil {
		return fmt.Errorf("reading release intents no run settled: %w", err)
	}
	var errs []error
	for _, in := range open {
		if _, err := r.settleIntent(ctx, in); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// settleIntent reads the binding of an open intent and records what came of
// the release, returning the outcome, or "" when it cannot be told yet.
func (r *release) settleIntent(ctx context.Context, in hap.OpenIntent) (string, error) {
	outcome, why, err := r.tellIntent(ctx, in)
	if err != nil || outcome == "" {
		return "", err
	}
	r.Log.Warn("settled a release whose outcome was not recorded", zap.String("binding", in.BindingName),
		zap.String("globalAccount", in.GlobalAccountID), zap.Int64("intent", in.ID),
		zap.String("outcome", outcome), zap.String("why", why))
	d := hap.ReleaseDecision{
		Binding: hap.Binding{Name: in.BindingName, GlobalAccountID: in.GlobalAccountID, Pool: in.Pool},
		Reason:  fmt.Sprintf("settled: %s (intended at %s: %s)", why, in.At.UTC().Format(time.RFC3339Nano), in.Reason),
	}
	if outcome == hap.OutcomeReleased {
		return outcome, r.auditReleased(ctx, d, in.ID)
	}
	return outcome, r.auditSettled(ctx, d, in.ID, outcome)
}

// tellIntent finds out what came of an intent. A binding still at the
// version the update is guarded by cannot tell: the update may be on its
// way still (held by a stalled server or an intermediary). So the job makes
// it impossible: it voids the release with a write of its own guarded by
// that same version. If that lands, the update never can (aborted); if it
// conflicts, the binding moved on, and reading it again tells.
func (r *release) tellIntent(ctx context.Context, in hap.OpenIntent) (outcome, why string, err error) {
	for range 2 {
		live, err := r.gardener.GetBinding(ctx, in.BindingName)
		exists := true
		switch {
		case r.gardener.IsNotFound(err):
			exists = false
		case err != nil:
			return "", "", fmt.Errorf("settling the release begun on binding %s: %w", in.BindingName, err)
		}
		if outcome, why := settlement(live, exists, in.ReleaseRecord); outcome != "" {
			return outcome, why, nil
		}
		err = r.gardener.VoidRelease(ctx, in.BindingName, in.ResourceVersion, releaseID(in.ID))
		switch {
		case err == nil:
			return hap.OutcomeAborted, fmt.Sprintf("voided at version %s, which the update was guarded by: it can never land", in.ResourceVersion), nil
		case !r.gardener.IsConflict(err):
			return "", "", fmt.Errorf("voiding the release begun on binding %s: %w", in.BindingName, err)
		}
	}
	return "", "", fmt.Errorf("settling the release begun on binding %s: the binding moved and still cannot tell", in.BindingName)
}

// settlement decides what came of an intent from the binding as it is now
// (exists false: it is gone): released when the binding carries the
// intent's mark; aborted when it has moved past the version the update was
// guarded by without the mark, or is gone; "" while it stands at that
// version, where the update might still land. The reason says which.
func settlement(live hap.Binding, exists bool, in hap.ReleaseRecord) (outcome, why string) {
	switch {
	case in.ResourceVersion == "":
		return legacySettlement(live, exists, in)
	case !exists:
		return hap.OutcomeAborted, "the binding no longer exists"
	case live.ReleaseID == releaseID(in.ID):
		return hap.OutcomeReleased, "the binding carries this release's mark"
	case live.ResourceVersion != in.ResourceVersion:
		return hap.OutcomeAborted, fmt.Sprintf("the binding moved from version %s to %s without this release's mark; the guarded update can no longer land",
			in.ResourceVersion, live.ResourceVersion)
	}
	return "", ""
}

// legacySettlement settles an intent written before intents carried their
// resourceVersion and updates their mark: the release landed if the
// binding is no longer claimed by the GA or is marked dirty (an intent of
// the former unclaim mode only if the claim is gone).
func legacySettlement(live hap.Binding, exists bool, in hap.ReleaseRecord) (outcome, why string) {
	switch {
	case !exists:
		return hap.OutcomeAborted, "the binding no longer exists"
	case live.GlobalAccountID != in.GlobalAccountID || in.Mode == ReleaseDirty && live.Dirty:
		return hap.OutcomeReleased, "the run that released it ended before recording it"
	}
	return hap.OutcomeAborted, "the run that meant to release it ended before the update landed"
}
