package provisioning

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Withdrawal is a binding KEB's free step has just marked dirty, handing its
// account to the cleanup.
type Withdrawal struct {
	BindingName string
}

// withdrawnByKEB is the reason a withdrawal of KEB's free step records.
const withdrawnByKEB = "KEB's free step marked it dirty"

// WithdrawBinding takes a binding out of every pick at once, whatever the
// candidate table's age: KEB calls it in its free step, right after it set
// dirty: "true" on the binding (and again when it finds the binding already
// dirty, so a retry after a lost answer withdraws too). Without it the table
// would propose the binding until the job's next run sees the label, and
// Gardener's confirmation would reject it then: one more call to Gardener.
//
// It is one statement, within the client's timeout and ctx, and
// idempotent. The withdrawal ends by itself: a RecordClaim of the binding
// ends it (the account was cleaned and claimed anew), and so does a
// candidates run whose snapshot, taken after the withdrawal, shows the
// binding without dirty or gone.
func (c *Client) WithdrawBinding(ctx context.Context, w Withdrawal) error {
	if strings.TrimSpace(w.BindingName) == "" {
		return errors.New("withdraw binding: binding name is empty")
	}
	return c.withdraw(ctx, w.BindingName, withdrawnByKEB)
}

// withdraw records binding's withdrawal with reason.
func (c *Client) withdraw(ctx context.Context, binding, reason string) error {
	query, err := withdrawSQL(c.Schema)
	if err != nil {
		return fmt.Errorf("withdraw binding %q: %w", binding, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	rows, err := c.query(ctx, query, binding, reason)
	if err == nil {
		err = drain(rows)
	}
	if err != nil {
		return fmt.Errorf("withdraw binding %q: %w", binding, err)
	}
	return nil
}
