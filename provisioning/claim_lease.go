package provisioning

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// One claim however many of KEB's workers ask, for a Client with
// HoldClaims. KEB decides to claim outside its step's mutex, so every
// worker that finds a GA's bindings of a pool full claims an account of its
// own. The table holds the claim instead: the
// first request that reaches ClaimNew for a GA and pool takes a lease on
// that GA and pool (claim_leases, by the database alone, across workers and
// replicas), and every other request for them meanwhile is answered
// ErrClaimPending at once, with the interval after which KEB retries its
// step (ClaimPendingError.RetryAfter): nothing waits inside KEB's worker. RecordClaim
// ends the lease; the retried requests then ask the table again and are
// placed on the claimed binding while it is below its limit, and the first
// one to find it full takes the next lease. A claimant that dies or gives
// up leaves its lease to expire after Client.ClaimLease (or ends it with
// AbandonClaim), and the next retry takes it over.

// DefaultClaimLease is how long a claim lease holds when the Client names no
// ClaimLease: ample for KEB's claim in Gardener (a list and an update under
// the step's mutex) and RecordClaim's budget, and well inside the minute
// KEB's resolve step retries for, so that a retry takes over a dead
// claimant's lease before KEB gives up on the provisioning.
const DefaultClaimLease = 30 * time.Second

// DefaultClaimRetry is the longest interval NextBinding asks KEB to retry
// its step after when another request holds the claim and the Client names
// no ClaimRetry. KEB's claim is a list and an update in Gardener, then
// RecordClaim: usually done within a quarter of a second, so most retries
// find it recorded and are placed; a GA whose burst needs several claims
// one after another is placed within a second or two rather than within
// KEB's 10 s retries (resolveSubscriptionSecretRetryInterval), which would
// outlast the step's minute at seven claims. Each retry costs KEB's queue
// one run of the step and the table two short statements.
const DefaultClaimRetry = 250 * time.Millisecond

func (c *Client) claimLease() time.Duration {
	if c.ClaimLease <= 0 {
		return DefaultClaimLease
	}
	return c.ClaimLease
}

// retryAfter is when a request that found l held by another should retry:
// at the latest when l expires and may be taken over.
func (c *Client) retryAfter(l lease) time.Duration {
	retry := c.ClaimRetry
	if retry <= 0 {
		retry = DefaultClaimRetry
	}
	if l.left > 0 {
		return min(retry, l.left)
	}
	return retry
}

// lease is the lease on a GA and pool as one look at claim_leases saw it.
type lease struct {
	holder string        // the instance holding it; "" when there is none
	left   time.Duration // until it expires, by the database's clock
}

// holdClaim takes the claim of req's GA and pool for req's instance, whose
// pick said ClaimNew, and answers ClaimNew under it, or ErrClaimPending
// when another request holds it. Under the lease no other claim can be
// recorded, so the table is asked once more first: one recorded between
// the first proposal and the lease places the request on it instead. A
// claim Gardener does not confirm ends the lease at once, so that the next
// request for the GA and pool claims without retrying until it expires.
func (c *Client) holdClaim(ctx context.Context, req Request) (Pick, error) {
	l, err := c.takeLease(ctx, req)
	if err != nil {
		return Pick{}, err
	}
	if l.holder != req.InstanceID {
		return Pick{}, &ClaimPendingError{Request: req, Holder: l.holder, RetryAfter: c.retryAfter(l)}
	}
	pick, err := c.confirmedProposal(ctx, req)
	if err == nil && pick.ClaimNew {
		pick, err = c.confirmedClaimNew(ctx, req, pick)
	}
	if err != nil || !pick.ClaimNew {
		err = errors.Join(err, c.AbandonClaim(ctx, req))
	}
	return pick, err
}

// takeLease takes the claim lease of req's GA and pool for req's instance,
// or renews it when the instance already holds it (KEB retrying its step).
// It answers the lease as it stands after the statement: req's instance
// when taken, else the request that holds it.
func (c *Client) takeLease(ctx context.Context, req Request) (lease, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	s := schema.OrDefault(c.Schema)
	var taken sql.NullString
	rows, err := c.query(ctx, fmt.Sprintf(takeLeaseTemplate, s),
		req.GlobalAccountID, req.HyperscalerType, req.EUAccess, req.InstanceID, c.claimLease().Seconds())
	if err == nil {
		err = scanNamed(rows, map[string]any{"taken": &taken})
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// Another request holds a live lease: nothing was taken.
	case err != nil:
		return lease{}, fmt.Errorf("next binding for instance %q: take the claim lease of global account %q, pool %s (euAccess %t): %w",
			req.InstanceID, req.GlobalAccountID, req.HyperscalerType, req.EUAccess, err)
	case taken.Valid:
		return lease{holder: req.InstanceID, left: c.claimLease()}, nil
	}
	return c.lookAtLease(ctx, req)
}

// lookAtLease reads the claim lease of req's GA and pool.
func (c *Client) lookAtLease(ctx context.Context, req Request) (lease, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	var holder sql.NullString
	var left sql.NullFloat64
	rows, err := c.query(ctx, fmt.Sprintf(leaseTemplate, schema.OrDefault(c.Schema)), req.GlobalAccountID, req.HyperscalerType, req.EUAccess)
	if err == nil {
		err = scanNamed(rows, map[string]any{"holder": &holder, "left_seconds": &left})
	}
	if err != nil {
		return lease{}, fmt.Errorf("next binding for instance %q: read the claim lease of global account %q, pool %s (euAccess %t): %w",
			req.InstanceID, req.GlobalAccountID, req.HyperscalerType, req.EUAccess, err)
	}
	return lease{holder: holder.String, left: time.Duration(left.Float64 * float64(time.Second))}, nil
}

// AbandonClaim ends the claim lease req's instance holds, when KEB could not
// claim after NextBinding answered ClaimNew (no free binding in the pool,
// Gardener refused the label): the next request for the GA and pool claims
// at once instead of retrying until the lease expires. Without the call the
// lease simply expires after ClaimLease. It is one statement and
// idempotent; a lease another request holds is left alone.
func (c *Client) AbandonClaim(ctx context.Context, req Request) error {
	if err := checkRequest(req); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	rows, err := c.query(ctx, fmt.Sprintf(abandonLeaseTemplate, schema.OrDefault(c.Schema)),
		req.GlobalAccountID, req.HyperscalerType, req.EUAccess, req.InstanceID)
	if err == nil {
		err = drain(rows)
	}
	if err != nil {
		return fmt.Errorf("abandon the claim of instance %q: %w", req.InstanceID, err)
	}
	return nil
}
