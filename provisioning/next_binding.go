// Package provisioning is the read path KEB calls when it provisions a
// cluster: one SQL statement against the candidate table the hap-reconciler
// job keeps, which names the binding to use or says to claim a new one. It
// needs nothing but database/sql, so KEB can import it as it is.
package provisioning

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// DefaultSchema is where the job keeps its tables unless configured
// otherwise.
const DefaultSchema = "hap"

// Querier is what NextBinding needs of a connection: *sql.DB, *sql.Conn and
// *sql.Tx all have it. Outside a transaction, or in a READ COMMITTED one, is
// what the statement is built for; in a REPEATABLE READ or SERIALIZABLE
// transaction a concurrent pick of the same row makes it fail with a
// serialization error instead of waiting.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Request says which cluster is being placed and in which pool.
type Request struct {
	// InstanceID makes the pick idempotent: a retry for the same instance
	// gets the binding it was given before.
	InstanceID string
	// GlobalAccountID is the GA whose bindings to choose from; "" means the
	// shared pool.
	GlobalAccountID string
	HyperscalerType string
	EUAccess        bool
	// Schema holds the job's tables; "" means DefaultSchema.
	Schema string
}

// nextBindingTemplate is the one statement of the read path; %[1]s is the
// schema. Parameters: $1 instance id, $2 GA, $3 hyperscaler type, $4 EU
// access.
//
// Why it is safe under READ COMMITTED, with many KEB replicas picking at
// once and the job rewriting the table now and then:
//   - picked locks the chosen row (FOR UPDATE). A concurrent pick that chose
//     the same row waits for this one to commit, and PostgreSQL then
//     re-evaluates the WHERE clause on the row's newest version, with
//     reserved already bumped: a row that reached its limit is skipped and
//     the next one in order is taken. The limit therefore holds however many
//     picks run at once.
//   - The job's rewrite takes no table lock; it changes only the rows that
//     differ, in one transaction, and lowers reserved by the reservations it
//     drops (a relative change, like the pick's +1). A pick that chose a row
//     the rewrite holds waits for it, then PostgreSQL re-checks the WHERE
//     clause on the row's new version (a removed row is skipped): the limit
//     holds and both changes count. Such a pick ordered the group by the
//     ranks it read before the rewrite, so it may take the old rank order
//     once; it never takes a row past its limit.
//   - The reservation row is inserted first and the counter bumped only
//     when the insert happened, so two concurrent calls for one instance id
//     cannot both count; the loser sees picked but no bumped row, and the
//     caller asks again to find the winner's reservation.
//   - A GA and pool under KEB's guard (minBindingsForGuard) picks nothing:
//     guard says so, and NextBinding answers ErrGuarded.
//   - Ties go to the name first in byte order (COLLATE "C"), the order the
//     API server lists bindings in, whatever the database's collation.
//
// The CTE with FOR UPDATE is MATERIALIZED so that it runs exactly once.
const nextBindingTemplate = `
WITH existing AS (
    SELECT binding_name
    FROM %[1]s.binding_reservations
    WHERE instance_id = $1
),
guard AS (
    SELECT EXISTS (
        SELECT 1
        FROM %[1]s.binding_candidates g
        WHERE g.global_account_id = $2
          AND g.hyperscaler_type = $3
          AND g.eu_access = $4
          AND g.guarded
    ) AS guarded
),
picked AS MATERIALIZED (
    SELECT c.binding_name
    FROM %[1]s.binding_candidates c
    WHERE NOT EXISTS (SELECT 1 FROM existing)
      AND NOT (SELECT guarded FROM guard)
      AND c.global_account_id = $2
      AND c.hyperscaler_type = $3
      AND c.eu_access = $4
      AND c.selectable
      AND (c.cluster_limit IS NULL OR c.effective_count + c.reserved < c.cluster_limit)
    -- A GA fills its most populated binding first (rank 1); a shared pool
    -- spreads clusters over its least used binding.
    ORDER BY CASE WHEN c.global_account_id = '' THEN c.effective_count + c.reserved ELSE c.rank END,
             c.binding_name COLLATE "C"
    LIMIT 1
    FOR UPDATE
),
reservation AS (
    INSERT INTO %[1]s.binding_reservations
        (instance_id, binding_name, global_account_id, hyperscaler_type, eu_access)
    SELECT $1, binding_name, $2, $3, $4 FROM picked
    ON CONFLICT (instance_id) DO NOTHING
    RETURNING binding_name
),
bumped AS (
    UPDATE %[1]s.binding_candidates c
    SET reserved = c.reserved + 1
    FROM reservation r
    WHERE c.binding_name = r.binding_name
    RETURNING c.binding_name
)
SELECT coalesce((SELECT binding_name FROM existing), (SELECT binding_name FROM bumped)),
       (SELECT count(*) FROM picked),
       (SELECT guarded FROM guard)`

// NextBindingSQL returns the statement NextBinding runs, for schema.
func NextBindingSQL(schema string) (string, error) {
	if err := CheckSchema(schema); err != nil {
		return "", err
	}
	return fmt.Sprintf(nextBindingTemplate, schemaOrDefault(schema)), nil
}

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CheckSchema refuses a schema name that is not a plain identifier: it is
// written into the statements, not passed as a parameter. "" is the
// default. The job's configuration and its database adapter check the
// schema with it too, so one rule holds everywhere.
func CheckSchema(schema string) error {
	if schema != "" && !identifier.MatchString(schema) {
		return fmt.Errorf("schema %q: want lower-case letters, digits and _, not starting with a digit, at most 63", schema)
	}
	return nil
}

func schemaOrDefault(schema string) string {
	if schema == "" {
		return DefaultSchema
	}
	return schema
}

// lostRaceAttempts bounds how often NextBinding asks again after losing a
// race with a concurrent call for the same instance; the second ask finds
// the winner's reservation.
const lostRaceAttempts = 3

// ErrGuarded is NextBinding's answer for a GA and pool under KEB's guard
// (minBindingsForGuard): the GA holds at least that many bindings of the pool
// and none has an active instance of its own. KEB fails the provisioning: it
// neither uses a binding nor claims a new one.
var ErrGuarded = errors.New("provisioning guarded: the global account's bindings in this pool hold no active instance (minBindingsForGuard)")

// NextBinding names the binding for req's cluster and reserves a place in
// it, or returns claimNew when none of the GA's bindings in that pool is
// below its limit, in which case KEB claims a new binding from the pool. A
// GA and pool under KEB's guard get an error that is ErrGuarded.
func NextBinding(ctx context.Context, db Querier, req Request) (name string, claimNew bool, err error) {
	if strings.TrimSpace(req.InstanceID) == "" {
		return "", false, errors.New("next binding: instance id is empty")
	}
	if strings.TrimSpace(req.HyperscalerType) == "" {
		return "", false, fmt.Errorf("next binding for instance %q: hyperscaler type is empty", req.InstanceID)
	}
	query, err := NextBindingSQL(req.Schema)
	if err != nil {
		return "", false, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
	}
	for attempt := 0; attempt < lostRaceAttempts; attempt++ {
		var binding sql.NullString
		var picked int
		var guarded bool
		err := db.QueryRowContext(ctx, query, req.InstanceID, req.GlobalAccountID, req.HyperscalerType, req.EUAccess).
			Scan(&binding, &picked, &guarded)
		switch {
		case err != nil:
			return "", false, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
		case binding.Valid:
			return binding.String, false, nil
		case guarded:
			return "", false, fmt.Errorf("next binding for instance %q, global account %q, pool %s (euAccess %t): %w",
				req.InstanceID, req.GlobalAccountID, req.HyperscalerType, req.EUAccess, ErrGuarded)
		case picked == 0:
			return "", true, nil
		}
	}
	return "", false, fmt.Errorf("next binding for instance %q: a concurrent call for the same instance kept winning", req.InstanceID)
}
