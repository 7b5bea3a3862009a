package testbed

import (
	"context"

	"github.com/kyma-project/hap-reconciler/provisioning"
)

// The read path's calls through a client made for the one call, as a test
// that asks once needs it: the client's statements are released after it.

// Propose is the candidate table's answer alone (Client.Propose).
func Propose(ctx context.Context, db provisioning.Querier, req provisioning.Request) (provisioning.Pick, error) {
	c := &provisioning.Client{DB: db}
	defer c.Close()
	return c.Propose(ctx, req)
}

// WithdrawBinding is KEB's free step's withdrawal (Client.WithdrawBinding).
func WithdrawBinding(ctx context.Context, db provisioning.Querier, w provisioning.Withdrawal) error {
	c := &provisioning.Client{DB: db}
	defer c.Close()
	return c.WithdrawBinding(ctx, w)
}

// RecordClaim is KEB's record of a claim (Client.RecordClaim).
func RecordClaim(ctx context.Context, db provisioning.Querier, claim provisioning.Claim) error {
	c := &provisioning.Client{DB: db}
	defer c.Close()
	return c.RecordClaim(ctx, claim)
}
