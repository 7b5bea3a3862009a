package provisioning

import (
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// The answers other than a binding or ClaimNew, one error each, told apart
// with errors.Is. LivePath says which of them hand the request to KEB's
// live path.
var (
	// ErrStale: the candidate table is older than Client.MaxAge, or was
	// never computed: the job has not run for a while.
	ErrStale = errors.New("candidate table too old to answer from")

	// ErrNoKEBIndex: KEB's instances table lacks the valid index the pick
	// counts through (schema.KEBIndexUp): missing, still being built, or
	// left INVALID by a build that failed. Without it each pick would scan
	// KEB's table.
	ErrNoKEBIndex = errors.New("KEB's instances table has no valid index " + schema.KEBIndexName + " (schema.KEBIndexUp)")

	// ErrUnconfirmed: the table had not seen Gardener within
	// Client.SeenWithin (or never: a CronJob's table), and the Client has
	// no Gardener to confirm its answer with. KEB takes its live path.
	ErrUnconfirmed = errors.New("the candidate table had not seen Gardener recently and there is no Gardener to confirm with")

	// ErrClaimedSince: Gardener lists bindings of the GA in the pool that
	// the table does not (claimed on KEB's live path, by a replica not
	// switched, or labelled by hand since the job's snapshot), or the table
	// lists bindings Gardener no longer does. Only KEB's live path, which
	// lists them, can count them.
	ErrClaimedSince = errors.New("the global account's bindings in Gardener are not the table's")

	// ErrRejected: Gardener rejected every binding the table proposed
	// (another tenant, dirty, another pool or provider, gone). Each
	// rejected binding is withdrawn from the table until a newer snapshot.
	ErrRejected = errors.New("Gardener rejected the table's proposals")

	// ErrSharedPoolEmpty: the table holds no binding of the shared pool.
	// Its membership may have changed since the snapshot (an operator
	// adding a binding to an exhausted pool), so KEB's live path, which
	// lists the pool now, decides.
	ErrSharedPoolEmpty = errors.New("the table holds no binding of the shared pool")

	// ErrGuarded: KEB's guard stops the GA (minBindingsForGuard): the GA
	// holds at least that many bindings of the pool, Gardener lists exactly
	// the bindings the table does, and none holds an active instance of the
	// GA now. KEB fails the provisioning, as its live path does.
	ErrGuarded = errors.New("provisioning guarded: the global account's bindings in this pool hold no active instance (minBindingsForGuard)")

	// ErrClaimPending: another request of the GA reached ClaimNew in the
	// same pool first and holds the claim (a lease). NextBinding answers it
	// as a *ClaimPendingError; KEB retries the step after its RetryAfter:
	// claiming on its live path would claim a second account for the same
	// need. The lease expires after Client.ClaimLease, and a retry after
	// that takes the claim over.
	ErrClaimPending = errors.New("another request of the global account is claiming a binding in this pool")

	// ErrClaimRefused: RecordClaim was asked something no retry can mend:
	// an incomplete claim, or an instance that holds another binding.
	ErrClaimRefused = errors.New("claim refused")
)

// ClaimPendingError is NextBinding's ErrClaimPending: who holds the claim of
// the request's GA and pool, and when KEB retries its step, the interval its
// RetryOperation takes.
type ClaimPendingError struct {
	Request    Request
	Holder     string
	RetryAfter time.Duration
}

func (e *ClaimPendingError) Error() string {
	return fmt.Sprintf("next binding for instance %q: instance %q holds the claim of global account %q, pool %s (euAccess %t), retry after %s: %s",
		e.Request.InstanceID, e.Holder, e.Request.GlobalAccountID, e.Request.HyperscalerType, e.Request.EUAccess, e.RetryAfter, ErrClaimPending)
}

// Is makes errors.Is(err, ErrClaimPending) hold.
func (e *ClaimPendingError) Is(target error) bool { return target == ErrClaimPending }

// LivePath says whether KEB resolves the binding on its live path after
// NextBinding answered err: every error but ErrGuarded, which is KEB's own
// verdict, and ErrClaimPending, after which KEB retries the step. A
// database or Gardener error is a live-path answer too: the table could not
// answer, KEB's live path may.
func LivePath(err error) bool {
	return err != nil && !errors.Is(err, ErrGuarded) && !errors.Is(err, ErrClaimPending)
}

func isGuarded(err error) bool { return errors.Is(err, ErrGuarded) }
