package kebworkers

import (
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/test/kebrules"
)

// workerClusters is how many of its clusters a worker keeps active.
const workerClusters = 2

// provision is one provisioning through KEB's resolve step switched to the
// table: KEB's instance row, the pick, and on its answer KEB's next move
// (the adoption guide): place on the binding; on ClaimNew claim under the
// replica's mutex and RecordClaim; on ErrClaimPending the step again after
// the interval it names; on a live-path answer KEB's live path. Then KEB
// writes the binding into the instance, and KEB's count of the binding's
// active instances must be within its limit.
//
// KEB's live path counts written instances only, not the table's
// reservations of steps still in flight, and its own steps decide outside
// their mutex: a live-path step beside other steps of the GA may over-fill
// a binding by KEB's own doing (docs/read-path.md). So that an over-filled
// binding here is the module's, a live-path step of a GA runs alone (the
// GA's steps lock, exclusively) and the table's steps of the GA run
// together (shared).
func (r *Run) provision(w *Worker) error {
	db := r.l.DB
	id := fmt.Sprintf("up-%d", r.instances.Add(1))
	if _, err := db.ExecContext(r.ctx, `INSERT INTO instances (instance_id, runtime_id, global_account_id,
		provisioning_parameters, created_at, updated_at) VALUES ($1, $1, $2, '{}', now(), now())`, id, w.GA); err != nil {
		return err
	}
	steps := r.gaSteps[w.GA]
	steps.RLock()
	binding, live, err := r.resolve(w, id)
	if live {
		steps.RUnlock()
		steps.Lock()
		defer steps.Unlock()
		binding, err = r.live(w)
	} else {
		defer steps.RUnlock()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	if _, err := db.ExecContext(r.ctx, `UPDATE instances SET subscription_secret_name = $2 WHERE instance_id = $1`, id, binding); err != nil {
		return err
	}
	counts, err := r.l.KEB.CountPerBinding(r.ctx, w.GA, []string{binding})
	if err != nil {
		return err
	}
	if n := counts[binding]; n > r.l.Limit {
		return fmt.Errorf("%s placed on %s, which then held %d of %s's active instances, above KEB's limit %d", id, binding, n, w.GA, r.l.Limit)
	}
	// KEB deprovisions too: each worker keeps its newest clusters, so the
	// GA's bindings fill and free as the run goes on, and the pool is
	// never exhausted however many picks the machine makes.
	w.active = append(w.active, id)
	if len(w.active) <= workerClusters {
		return nil
	}
	freed := w.active[0]
	w.active = w.active[1:]
	_, err = db.ExecContext(r.ctx, `UPDATE instances SET deleted_at = now() WHERE instance_id = $1`, freed)
	return err
}

// resolve is the step on the table's side: the binding, or live when the
// answer hands the step to KEB's live path.
func (r *Run) resolve(w *Worker, instance string) (binding string, live bool, err error) {
	req := r.l.Request(instance, w.GA)
	var waited time.Duration
	for {
		start := time.Now()
		a := w.Module.pick(r.ctx, req)
		r.took(pickTaken{pin: w.Pin, start: start, end: time.Now(), kind: a.kind(), err: a.err})
		switch {
		case a.failed != "":
			return "", false, errors.New(a.failed)
		case a.pending && waited+a.retryAfter <= kebrules.ResolveStepTimeout:
			waited += a.retryAfter
			if err := kebrules.Requeue(r.ctx, a.retryAfter); err != nil {
				return "", false, err
			}
			continue
		case a.livePath:
			return "", true, nil
		case a.err != "":
			return "", false, fmt.Errorf("an answer KEB fails the provisioning on: %s", a.err)
		case !a.claimNew:
			return a.binding, false, nil
		}
		w.replica.Lock()
		name, err := r.l.KEB.Claim(r.ctx, w.GA, r.l.Pool)
		w.replica.Unlock()
		if err != nil {
			return "", false, errors.Join(fmt.Errorf("claim: %w", err), w.Module.abandon(r.ctx, req))
		}
		// A RecordClaim that fails leaves the table without the claim:
		// the next pick may say ClaimNew again, a needless claim, never an
		// over-filled binding. KEB provisions on the claimed binding.
		if err := w.Module.record(r.ctx, req, name); err != nil {
			now := time.Now()
			r.took(pickTaken{pin: w.Pin, start: now, end: now, kind: kindRecordFailed, err: err.Error()})
		}
		return name, false, nil
	}
}

func (r *Run) took(p pickTaken) {
	r.mu.Lock()
	r.picks = append(r.picks, p)
	r.mu.Unlock()
}

// live is KEB's live path for the worker's GA: list and count, claim when
// the GA is full.
func (r *Run) live(w *Worker) (string, error) {
	v, err := r.l.KEB.Dedicated(r.ctx, w.GA, r.l.Pool)
	switch {
	case err != nil:
		return "", err
	case v.Decision.Guarded:
		return "", errors.New("KEB's live path guarded the provisioning")
	case !v.Decision.ClaimNew:
		return v.Decision.Binding, nil
	}
	return r.l.KEB.Claim(r.ctx, w.GA, r.l.Pool)
}
