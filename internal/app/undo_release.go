package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// UndoRequest says which release to undo: the binding's newest release the
// job recorded, or the one whose intent is Release; Reason is the
// operator's, recorded in the audit row.
type UndoRequest struct {
	Binding string
	// Release is the intent row's id (the hap-reconciler.kyma-project.io/release
	// annotation); 0 for the binding's newest recorded release.
	Release int64
	Reason  string
	// DryRun checks everything and changes nothing.
	DryRun bool
}

// Undone is what an undo did, or with DryRun would do.
type Undone struct {
	Binding         string
	Release         int64
	GlobalAccountID string
	Pool            hap.Pool
}

var errNoAPI = errors.New("undo-release writes to the Gardener API: it does not work on --gardener-file exports")

// UndoRelease gives a binding the job released back to the GA that held
// it: the dirty label the release set is removed, tenantName stays, so
// KEB's selectors for that GA (tenantName=GA, !dirty) return it again, and
// subscription-cleanup-job, which lists dirty=true, no longer takes it. It
// undoes only what the audit shows the job did, on a binding that still
// shows it: the release recorded as released in hap.binding_releases, the
// binding carrying that release's annotation, still dirty, still claimed by
// the GA the audit names (once the cleanup removed tenantName, the account
// was wiped and there is nothing to give back). The write is guarded by the
// resourceVersion just read, and an audit row (outcome undone) records it.
func (e *Env) UndoRelease(ctx context.Context, req UndoRequest) (Undone, error) {
	if e.gardener == nil {
		return Undone{}, &InputError{Err: errNoAPI}
	}
	g, finished := e.gardener.use()
	defer finished()
	client := g.live
	if client == nil {
		return Undone{}, &InputError{Err: errNoAPI}
	}
	released, err := e.recordedRelease(ctx, req)
	if err != nil {
		return Undone{}, err
	}
	done := Undone{Binding: released.BindingName, Release: released.IntentID, GlobalAccountID: released.GlobalAccountID, Pool: released.Pool}
	live, err := client.GetBinding(ctx, req.Binding)
	if err != nil {
		return done, fmt.Errorf("reading binding %s: %w", req.Binding, err)
	}
	if err := undoable(live, released); err != nil {
		return done, err
	}
	if req.DryRun {
		return done, nil
	}
	id := strconv.FormatInt(released.IntentID, 10)
	if err := client.UndoRelease(ctx, live.Name, live.ResourceVersion, id); err != nil {
		if client.IsConflict(err) {
			return done, fmt.Errorf("binding %s changed while its release was undone, nothing was changed: run undo-release again: %w", live.Name, err)
		}
		return done, err
	}
	row := hap.ReleaseRecord{BindingName: released.BindingName, GlobalAccountID: released.GlobalAccountID, Pool: released.Pool,
		Mode: released.Mode, Outcome: hap.OutcomeUndone, Reason: fmt.Sprintf("undoes release %d: %s", released.IntentID, req.Reason)}
	if _, err := e.Store.RecordRelease(ctx, row); err != nil {
		return done, fmt.Errorf("binding %s is its GA's again, but the undo is not recorded in the release history: %w", live.Name, err)
	}
	return done, nil
}

// recordedRelease is the release the request names, as the audit recorded
// it: an outcome row released, settling its intent.
func (e *Env) recordedRelease(ctx context.Context, req UndoRequest) (hap.ReleaseRecord, error) {
	history, err := e.Store.ReleaseHistory(ctx)
	if err != nil {
		return hap.ReleaseRecord{}, err
	}
	var found *hap.ReleaseRecord
	for i := range history {
		r := &history[i]
		if r.BindingName == req.Binding && r.Outcome == hap.OutcomeReleased && r.IntentID != 0 && (req.Release == 0 || r.IntentID == req.Release) {
			found = r // oldest first: the last is the newest
		}
	}
	switch {
	case found != nil:
		return *found, nil
	case req.Release != 0:
		return hap.ReleaseRecord{}, &InputError{Err: fmt.Errorf("--release %d: hap.binding_releases records no such release of binding %s "+
			"(a release is named by its intent row's id, the binding's annotation %s)", req.Release, req.Binding, hap.AnnotationRelease)}
	}
	return hap.ReleaseRecord{}, &InputError{Err: fmt.Errorf("--binding %s: hap.binding_releases records no release of it that landed: "+
		"the job did not release it (KEB's free step marks a binding dirty itself), or the run that did has not recorded it yet", req.Binding)}
}

// undoable says why the live binding no longer shows the release r, if it
// does not.
func undoable(live hap.Binding, r hap.ReleaseRecord) error {
	id := strconv.FormatInt(r.IntentID, 10)
	switch {
	case live.ReleaseID != id:
		return fmt.Errorf("binding %s carries release %q in %s, not release %s: it was released again since, or dirty was set by someone else; nothing changed",
			live.Name, live.ReleaseID, hap.AnnotationRelease, id)
	case live.GlobalAccountID == "" && !live.Dirty:
		return fmt.Errorf("binding %s has neither dirty nor tenantName: subscription-cleanup-job has wiped the account and returned it to the pool; "+
			"the release cannot be undone, nothing changed", live.Name)
	case !live.Dirty:
		return fmt.Errorf("binding %s has no dirty label: its release was undone already, or the label removed by hand; nothing changed", live.Name)
	case live.GlobalAccountID != r.GlobalAccountID:
		return fmt.Errorf("binding %s: tenantName is %q, the release took it from %q; nothing changed", live.Name, live.GlobalAccountID, r.GlobalAccountID)
	}
	return nil
}
