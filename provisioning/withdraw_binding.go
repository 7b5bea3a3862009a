package provisioning

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Withdrawal is a binding KEB's free step has just marked dirty, handing its
// account to the cleanup.
type Withdrawal struct {
	BindingName string
	// Schema holds the job's tables; "" means DefaultSchema.
	Schema string
}

// withdrawBindingTemplate records the withdrawal; %[1]s is the schema.
// Parameter: $1 binding. A second call keeps the first time: the withdrawal
// lasts until a snapshot taken a minute after it shows the binding no
// longer dirty, and a retry must not push that moment on.
const withdrawBindingTemplate = `
INSERT INTO %[1]s.withdrawn_bindings AS w (binding_name, withdrawn_at)
VALUES ($1, now())
ON CONFLICT (binding_name) DO UPDATE SET withdrawn_at = w.withdrawn_at
RETURNING w.binding_name`

// WithdrawBinding takes a binding out of every pick at once, whatever the
// candidate table's age: KEB calls it in its free step, right after it set
// dirty: "true" on the binding (and again when it finds the binding already
// dirty, so a retry after a lost answer withdraws too). Without it the table
// offers the binding until the job's next run sees the label, and a GA's
// next cluster could land on an account already handed to the cleanup.
//
// It is one statement and idempotent. The withdrawal ends by itself: a
// RecordClaim of the binding ends it (the account was cleaned and claimed
// anew), and so does a candidates run whose snapshot, taken a minute or more
// after the withdrawal, shows the binding without dirty or gone.
func WithdrawBinding(ctx context.Context, db Querier, w Withdrawal) error {
	if strings.TrimSpace(w.BindingName) == "" {
		return errors.New("withdraw binding: binding name is empty")
	}
	query, err := WithdrawBindingSQL(w.Schema)
	if err != nil {
		return fmt.Errorf("withdraw binding %q: %w", w.BindingName, err)
	}
	var name sql.NullString
	if err := db.QueryRowContext(ctx, query, w.BindingName).Scan(&name); err != nil {
		return fmt.Errorf("withdraw binding %q: %w", w.BindingName, err)
	}
	return nil
}

// WithdrawBindingSQL returns the statement WithdrawBinding runs, for schema.
func WithdrawBindingSQL(schema string) (string, error) {
	if err := CheckSchema(schema); err != nil {
		return "", err
	}
	return fmt.Sprintf(withdrawBindingTemplate, schemaOrDefault(schema)), nil
}
