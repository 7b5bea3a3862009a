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
	"time"
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
	// MaxAge is the oldest candidate table KEB accepts an answer from,
	// measured from the snapshot the job computed it on, by the database's
	// clock; 0 means DefaultMaxAge. An older table is refused with ErrStale.
	MaxAge time.Duration
	// Schema holds the job's tables; "" means DefaultSchema.
	Schema string
}

// DefaultMaxAge is the oldest table NextBinding answers from when the Request
// names no MaxAge: three runs of the chart's ten-minute CronJob, so one
// failed run goes unnoticed by provisioning and two in a row do not.
const DefaultMaxAge = 30 * time.Minute

// maxAge is req's MaxAge, or the default.
func (req Request) maxAge() time.Duration {
	if req.MaxAge <= 0 {
		return DefaultMaxAge
	}
	return req.MaxAge
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
//   - A table computed from a snapshot older than $5 seconds (freshness, by
//     the database's clock) picks nothing, and NextBinding answers ErrStale;
//     a table never computed has no age and is stale.
//   - A binding KEB's free step withdrew (WithdrawBinding) is never picked,
//     whatever the table's age: the row may still come from a snapshot
//     taken before KEB marked the binding dirty.
//   - Ties go to the name first in byte order (COLLATE "C"), the order the
//     API server lists bindings in, whatever the database's collation.
//
// The CTE with FOR UPDATE is MATERIALIZED so that it runs exactly once.
const nextBindingTemplate = `
WITH freshness AS (
    SELECT extract(epoch FROM now() - max(computed_at)) AS age
    FROM %[1]s.candidates_computed
),
existing AS (
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
      AND (SELECT age FROM freshness) <= $5
      AND NOT (SELECT guarded FROM guard)
      AND c.global_account_id = $2
      AND c.hyperscaler_type = $3
      AND c.eu_access = $4
      AND c.selectable
      AND (c.cluster_limit IS NULL OR c.effective_count + c.reserved < c.cluster_limit)
      AND NOT EXISTS (SELECT 1 FROM %[1]s.withdrawn_bindings w WHERE w.binding_name = c.binding_name)
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
       (SELECT guarded FROM guard),
       (SELECT age FROM freshness)`

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

// ErrStale is NextBinding's answer when the candidate table is older than
// the Request's MaxAge, or was never computed: the job has not run for a
// while, and KEB takes its binding the way it does without the table.
var ErrStale = errors.New("candidate table too old to answer from")

// Pick is NextBinding's answer.
type Pick struct {
	// Binding is the binding to provision the cluster on; "" with ClaimNew.
	Binding string
	// ClaimNew: none of the GA's bindings in the pool is below its limit;
	// KEB claims a new binding from the pool, then calls RecordClaim.
	ClaimNew bool
	// TableAge is the age of the snapshot the table was computed from, by
	// the database's clock, when NextBinding read it.
	TableAge time.Duration
}

// NextBinding names the binding for req's cluster and reserves a place in
// it, or answers ClaimNew when none of the GA's bindings in that pool is
// below its limit, in which case KEB claims a new binding from the pool. A
// GA and pool under KEB's guard get an error that is ErrGuarded; a table
// older than req.MaxAge one that is ErrStale. A retry for an instance that
// already has its binding gets that binding again, whatever the table's age.
func NextBinding(ctx context.Context, db Querier, req Request) (Pick, error) {
	if strings.TrimSpace(req.InstanceID) == "" {
		return Pick{}, errors.New("next binding: instance id is empty")
	}
	if strings.TrimSpace(req.HyperscalerType) == "" {
		return Pick{}, fmt.Errorf("next binding for instance %q: hyperscaler type is empty", req.InstanceID)
	}
	query, err := NextBindingSQL(req.Schema)
	if err != nil {
		return Pick{}, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
	}
	maxAge := req.maxAge()
	for attempt := 0; attempt < lostRaceAttempts; attempt++ {
		var binding sql.NullString
		var picked int
		var guarded bool
		var age sql.NullFloat64
		err := db.QueryRowContext(ctx, query, req.InstanceID, req.GlobalAccountID, req.HyperscalerType, req.EUAccess, maxAge.Seconds()).
			Scan(&binding, &picked, &guarded, &age)
		tableAge := time.Duration(age.Float64 * float64(time.Second))
		switch {
		case err != nil:
			return Pick{}, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
		case binding.Valid:
			return Pick{Binding: binding.String, TableAge: tableAge}, nil
		case !age.Valid:
			return Pick{}, fmt.Errorf("next binding for instance %q: the job has not computed the table yet: %w", req.InstanceID, ErrStale)
		case tableAge > maxAge:
			return Pick{TableAge: tableAge}, fmt.Errorf("next binding for instance %q: table computed %s ago, more than %s: %w",
				req.InstanceID, tableAge.Round(time.Second), maxAge, ErrStale)
		case guarded:
			return Pick{TableAge: tableAge}, fmt.Errorf("next binding for instance %q, global account %q, pool %s (euAccess %t): %w",
				req.InstanceID, req.GlobalAccountID, req.HyperscalerType, req.EUAccess, ErrGuarded)
		case picked == 0:
			return Pick{ClaimNew: true, TableAge: tableAge}, nil
		}
	}
	return Pick{}, fmt.Errorf("next binding for instance %q: a concurrent call for the same instance kept winning", req.InstanceID)
}
