package provisioning

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// Claim is a binding KEB has just claimed from the pool for the GA of a
// Request that NextBinding answered with claimNew.
type Claim struct {
	// Request is the request NextBinding answered: the instance, the GA
	// and the pool.
	Request
	// BindingName is the binding now labelled with the GA.
	BindingName string
	// Limit is the binding's cluster limit as KEB applies it; nil when the
	// GA does not use several bindings.
	Limit *int
}

// RecordClaim tells the candidate table about a binding KEB claimed after
// NextBinding said ClaimNew, and ends the claim's lease. Without it the
// GA's next pick would find a binding in Gardener the table does not hold
// and go KEB's live path until the job's next run lists it. It is one
// statement, within the client's timeout and ctx, and idempotent: a second
// call for the same instance changes nothing more. It does not retry: a
// failure leaves the lease to expire (ClaimLease), and the GA's next
// requests then find the claimed binding on KEB's live path, never
// claiming a second account for it. ErrClaimRefused means no retry can
// mend the call.
//
// The job's next run lists the binding from Gardener's labels and drops the
// reservation once KEB's table counts the instance. A run whose snapshot was
// taken before the claim keeps the row this call wrote (recorded_claims).
func (cl *Client) RecordClaim(ctx context.Context, c Claim) error {
	switch {
	case strings.TrimSpace(c.InstanceID) == "":
		return refused(errors.New("record claim: instance id is empty"))
	case strings.TrimSpace(c.BindingName) == "":
		return refused(fmt.Errorf("record claim for instance %q: binding name is empty", c.InstanceID))
	case strings.TrimSpace(c.GlobalAccountID) == "":
		return refused(fmt.Errorf("record claim of binding %q for instance %q: global account is empty; KEB never claims a shared binding", c.BindingName, c.InstanceID))
	case strings.TrimSpace(c.HyperscalerType) == "":
		return refused(fmt.Errorf("record claim of binding %q for instance %q: hyperscaler type is empty", c.BindingName, c.InstanceID))
	case c.Limit != nil && *c.Limit < 1:
		return refused(fmt.Errorf("record claim of binding %q for instance %q: limit %d, want at least 1 or none", c.BindingName, c.InstanceID, *c.Limit))
	}
	query, err := recordClaimSQL(cl.Schema)
	if err != nil {
		return refusedf("record claim of binding %q for instance %q: %w", c.BindingName, c.InstanceID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, cl.timeout())
	defer cancel()
	for attempt := 0; attempt < lostRaceAttempts; attempt++ {
		var holds sql.NullString
		rows, err := cl.query(ctx, query, c.InstanceID, c.GlobalAccountID, c.HyperscalerType, c.EUAccess, c.BindingName, c.Limit)
		if err == nil {
			err = scanNamed(rows, map[string]any{"holds": &holds})
		}
		if err != nil {
			return fmt.Errorf("record claim of binding %q for instance %q: %w", c.BindingName, c.InstanceID, err)
		}
		switch {
		case !holds.Valid:
			continue // a concurrent call for the instance won; ask again to see what it did
		case holds.String != c.BindingName:
			return refused(fmt.Errorf("record claim of binding %q for instance %q: the instance already has binding %q reserved",
				c.BindingName, c.InstanceID, holds.String))
		}
		return nil
	}
	return fmt.Errorf("record claim of binding %q for instance %q: a concurrent call for the same instance kept winning", c.BindingName, c.InstanceID)
}

// recordClaimSQL returns the statement RecordClaim runs, for schema.
func recordClaimSQL(name string) (string, error) {
	if err := schema.Check(name); err != nil {
		return "", err
	}
	return fmt.Sprintf(recordClaimTemplate, schema.OrDefault(name)), nil
}

type refusal struct{ err error }

func (r refusal) Error() string              { return r.err.Error() }
func (r refusal) Unwrap() []error            { return []error{r.err, ErrClaimRefused} }
func refused(err error) error                { return refusal{err} }
func refusedf(format string, a ...any) error { return refused(fmt.Errorf(format, a...)) }
