package provisioning

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// recordClaimTemplate lists a freshly claimed binding in the candidate
// table at once, with the claiming instance reserved on it, so that the
// GA's next pick lands there instead of claiming yet another binding before
// the job's next run lists it. %[1]s is the schema. Parameters: $1 instance
// id, $2 GA, $3 hyperscaler type, $4 EU access, $5 binding, $6 limit.
//
// The new row ranks after the GA's other rows of the pool: those are full,
// or KEB would not have claimed. Its counts are zero; the reservation is
// what counts it, exactly as for a pick, until KEB writes the instance.
//   - The claim is recorded (recorded_claims): a rewrite whose snapshot was
//     taken before it keeps the row as written here.
//   - A row of the same GA and pool only gains the reservation.
//   - A row another GA or pool still holds is a stale one: KEB claims only
//     a binding without tenantName, so the cleanup wiped it since. The row
//     becomes the claiming GA's, and the other GA's reservations on it are
//     void and dropped: that GA's picks never return the binding again.
//   - A second call for the same instance changes nothing; an instance that
//     already holds a reservation on another binding is refused by the
//     caller.
const recordClaimTemplate = `
WITH cleaned AS (
    -- A claimed binding was free, so the cleanup has wiped it since any
    -- withdrawal: that withdrawal is over.
    DELETE FROM %[1]s.withdrawn_bindings WHERE binding_name = $5
),
existing AS (
    SELECT binding_name
    FROM %[1]s.binding_reservations
    WHERE instance_id = $1
),
recorded AS (
    INSERT INTO %[1]s.recorded_claims AS k (binding_name, global_account_id, hyperscaler_type, eu_access, claimed_at)
    SELECT $5, $2, $3, $4, now()
    WHERE NOT EXISTS (SELECT 1 FROM existing)
    ON CONFLICT (binding_name) DO UPDATE
    SET global_account_id = excluded.global_account_id, hyperscaler_type = excluded.hyperscaler_type,
        eu_access = excluded.eu_access, claimed_at = excluded.claimed_at
),
others AS (
    DELETE FROM %[1]s.binding_reservations o
    WHERE o.binding_name = $5 AND NOT EXISTS (SELECT 1 FROM existing)
      AND (o.global_account_id, o.hyperscaler_type, o.eu_access) IS DISTINCT FROM ($2, $3, $4)
),
reservation AS (
    INSERT INTO %[1]s.binding_reservations
        (instance_id, binding_name, global_account_id, hyperscaler_type, eu_access)
    SELECT $1, $5, $2, $3, $4
    WHERE NOT EXISTS (SELECT 1 FROM existing)
    ON CONFLICT (instance_id) DO NOTHING
    RETURNING binding_name
),
listed AS (
    INSERT INTO %[1]s.binding_candidates AS c
        (binding_name, global_account_id, hyperscaler_type, eu_access, db_count, shoot_count,
         effective_count, cluster_limit, headroom, selectable, rank, reserved, computed_at)
    SELECT r.binding_name, $2, $3, $4, 0, 0, 0, $6::integer, $6::integer, true,
           (SELECT coalesce(max(o.rank), 0) + 1
            FROM %[1]s.binding_candidates o
            WHERE o.global_account_id = $2 AND o.hyperscaler_type = $3 AND o.eu_access = $4),
           1, now()
    FROM reservation r
    ON CONFLICT (binding_name) DO UPDATE
    SET reserved = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
                        THEN c.reserved + 1 ELSE 1 END,
        db_count = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
                        THEN c.db_count ELSE 0 END,
        shoot_count = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
                           THEN c.shoot_count ELSE 0 END,
        effective_count = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
                               THEN c.effective_count ELSE 0 END,
        cluster_limit = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
                             THEN c.cluster_limit ELSE excluded.cluster_limit END,
        headroom = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
                        THEN c.headroom ELSE excluded.headroom END,
        selectable = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
                          THEN c.selectable ELSE true END,
        guarded = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
                       THEN c.guarded ELSE false END,
        rank = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
                    THEN c.rank ELSE excluded.rank END,
        picks = c.picks + 1,
        global_account_id = $2, hyperscaler_type = $3, eu_access = $4
    RETURNING c.binding_name
)
SELECT coalesce((SELECT binding_name FROM existing), (SELECT binding_name FROM listed))`

// RecordClaim tells the candidate table about a binding KEB claimed after
// NextBinding said claimNew. Without it the GA's next pick would say
// claimNew again until the job's next run, and KEB would claim a second
// account where one was enough. It is one statement and idempotent: call
// it again for the same instance after a failure.
//
// The job's next run lists the binding from Gardener's labels and drops the
// reservation once KEB's table counts the instance. A run whose snapshot was
// taken before the claim keeps the row this call wrote (recorded_claims).
func RecordClaim(ctx context.Context, db Querier, c Claim) error {
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
	query, err := RecordClaimSQL(c.Schema)
	if err != nil {
		return refusedf("record claim of binding %q for instance %q: %w", c.BindingName, c.InstanceID, err)
	}
	for attempt := 0; attempt < lostRaceAttempts; attempt++ {
		var holds sql.NullString
		if err := db.QueryRowContext(ctx, query, c.InstanceID, c.GlobalAccountID, c.HyperscalerType, c.EUAccess, c.BindingName, c.Limit).
			Scan(&holds); err != nil {
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

// RecordClaimSQL returns the statement RecordClaim runs, for schema.
func RecordClaimSQL(schema string) (string, error) {
	if err := CheckSchema(schema); err != nil {
		return "", err
	}
	return fmt.Sprintf(recordClaimTemplate, schemaOrDefault(schema)), nil
}

// errRefused marks a RecordClaim error that no retry can mend: a bad call,
// or an instance that holds another binding.
var errRefused = errors.New("refused")

type refusal struct{ err error }

func (r refusal) Error() string              { return r.err.Error() }
func (r refusal) Unwrap() []error            { return []error{r.err, errRefused} }
func refused(err error) error                { return refusal{err} }
func refusedf(format string, a ...any) error { return refused(fmt.Errorf(format, a...)) }
