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
	"math"
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
	// Account is KEB's multi-account decision for this runtime (AccountFor):
	// the limit and the guard then come from KEB's configuration, as KEB's
	// live path applies them. nil: the table's, decided with the job's
	// configuration (hap-reconciler check says whether the two agree).
	Account *Account
}

// Account is what KEB's multi-account configuration says of one runtime.
type Account struct {
	// MultiAccount: the GA is on the allowlist
	// (MultiAccountConfig.IsGlobalAccountAllowed). Without it the GA has no
	// limit and keeps the first of its bindings by name.
	MultiAccount bool
	// Limit is KEB's LimitForProvider for the runtime's provider type
	// (operation.ProviderValues.ProviderType).
	Limit int
	// MinBindingsForGuard is KEB's guard; 0 means none.
	MinBindingsForGuard int
}

// MultiAccountConfig is the part of KEB's multi-account configuration
// (common/hyperscaler/multiaccount, *MultiAccountConfig) AccountFor reads.
type MultiAccountConfig interface {
	IsGlobalAccountAllowed(globalAccountID string) bool
	LimitForProvider(providerType string) int
}

// AccountFor is KEB's multi-account decision for a runtime of
// globalAccountID whose provider type is providerType: what
// resolveWithMultiAccountSupport applies.
func AccountFor(cfg MultiAccountConfig, minBindingsForGuard int, globalAccountID, providerType string) *Account {
	if cfg == nil || !cfg.IsGlobalAccountAllowed(globalAccountID) {
		return &Account{}
	}
	return &Account{MultiAccount: true, Limit: cfg.LimitForProvider(providerType), MinBindingsForGuard: minBindingsForGuard}
}

// account is the statement's $6..$9.
func (req Request) account() (given, multi bool, limit, minGuard int) {
	if req.Account == nil {
		return false, false, 0, 0
	}
	return true, req.Account.MultiAccount, req.Account.Limit, req.Account.MinBindingsForGuard
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
// schema, %[2]d MaxAge plus placementMargin in whole seconds (see the
// second bound below). Parameters: $1 instance id, $2 GA (” for a shared pool), $3
// hyperscaler type, $4 EU access, $5 the oldest table answered from in
// seconds, $6 whether the request carries KEB's multi-account decision
// (Request.Account), $7 multi-account, $8 limit, $9 minBindingsForGuard,
// $10 placementMargin in seconds.
//
// The table is a snapshot; the statement adds what KEB did since, from
// KEB's own instances table, where the resolve step writes every placement
// (updateInstance), whatever path chose the binding:
//   - kept: the GA's instances the rewrite listed on a binding
//     (snapshot_instances) that are still active, still on it and still the
//     GA's. A cluster deleted since no longer counts. The join is by
//     instance id, so it costs one index probe per cluster of the GA's
//     group.
//   - added: the GA's active instances on a binding of the group that the
//     rewrite did not list there, among those that can have been placed
//     since: created after instances_read_at less placementMargin (KEB's
//     index on created_at) or listed then without a binding. The second
//     bound on created_at, now less MaxAge and the margin, never excludes a
//     row the first includes while the table is fresh enough to answer
//     (instances were listed after the snapshot, by the same clock), but
//     the planner can estimate it: the first bound is known only when the
//     statement runs, so PostgreSQL would assume a third of KEB's table,
//     and at 400,000 instances that estimate alone lifts the plan's cost
//     past jit_above_cost, so every pick would spend some 80 ms compiling
//     it (measured at XL; docs/benchmarks.md). The interval is written into
//     the text, not passed: a prepared statement's generic plan can then
//     estimate the bound too, and PostgreSQL can keep that plan instead of
//     planning every pick (from a parameter, the generic plan's estimate
//     was a third of the table, and it was never chosen).
//   - KEB's count now is kept + added, exactly what
//     GetInstanceCountPerBinding counts (active, owner = the subscription GA
//     when set, else the instance's GA). A reservation counts on top while
//     its instance is active and KEB has not written a binding into it
//     (pending): KEB creates the row at the provision request, so a
//     reservation whose row is deleted or gone counts for nothing, as KEB's
//     count does.
//   - unsure: before answering ClaimNew, the GA's placements since the
//     snapshot on a binding the table does not offer the GA (no row, a
//     withdrawn one, another GA's) mean KEB claimed or reclaimed a binding
//     the table has not seen yet, on its live path: the table cannot tell
//     whether it belongs to this pool, and NextBinding answers ErrStale so
//     that KEB's live path, which sees it, decides.
//   - A binding whose Gardener shoots outnumber KEB's instances at the
//     snapshot keeps that excess (effective_count - db_count): the job's one
//     deviation, a binding Gardener shows full is never filled further.
//   - A shared pool orders by the snapshot's shoots plus the placements and
//     reservations since, KEB's least used as far as the table can see it.
//
// Why it is safe under READ COMMITTED, with many KEB replicas picking at
// once and the job rewriting the table now and then:
//   - picked locks the chosen row (FOR UPDATE OF c). A concurrent pick that
//     chose the same row waits for this one to commit, and PostgreSQL then
//     re-evaluates the WHERE clause on the row's newest version: its picks
//     column, bumped by every pick and claim and by nothing else, less the
//     value this statement's snapshot read (grp) is the number of picks
//     committed meanwhile, which the snapshot's counts cannot see. A row
//     that reached its limit is skipped and the next one in order is taken.
//     The limit therefore holds however many picks run at once, and a
//     rewrite committing meanwhile (which lowers reserved, not picks) cannot
//     make a pick count its own snapshot's reservations twice or not at all.
//   - The reservation row is inserted first and the counter bumped only
//     when the insert happened, so two concurrent calls for one instance id
//     cannot both count; the loser sees picked but no bumped row, and the
//     caller asks again to find the winner's reservation.
//   - A reservation on a binding since withdrawn, or whose row another GA
//     or pool holds now, is void: the statement says so, and NextBinding
//     drops it and asks again.
//   - The limit and the guard are KEB's when the request carries KEB's
//     decision ($6), else the table's (the job's configuration). A shared
//     pool has neither, as KEB applies none there.
//   - A table computed from a snapshot older than $5 seconds, or one whose
//     instances were never listed (instances_read_at), picks nothing, and
//     NextBinding answers ErrStale.
//   - A binding KEB's free step withdrew (WithdrawBinding) is never picked,
//     whatever the table's age.
//   - Ties go to the name first in byte order (COLLATE "C"), the order the
//     API server lists bindings in, whatever the database's collation.
//
// picked is MATERIALIZED so that it runs exactly once.
const nextBindingTemplate = `
WITH computed AS (
    SELECT extract(epoch FROM now() - max(computed_at)) AS age, max(instances_read_at) AS instances_read_at
    FROM %[1]s.candidates_computed
),
existing AS (
    SELECT r.binding_name,
           EXISTS (SELECT 1 FROM %[1]s.withdrawn_bindings w WHERE w.binding_name = r.binding_name)
           OR NOT EXISTS (SELECT 1 FROM %[1]s.binding_candidates c
                          WHERE c.binding_name = r.binding_name AND c.global_account_id = r.global_account_id
                            AND c.hyperscaler_type = r.hyperscaler_type AND c.eu_access = r.eu_access) AS void
    FROM %[1]s.binding_reservations r
    WHERE r.instance_id = $1
),
grp AS MATERIALIZED (
    SELECT c.binding_name, c.db_count, c.effective_count, c.guarded, c.picks,
           CASE WHEN $2 = '' THEN NULL
                WHEN $6 THEN CASE WHEN $7 THEN $8::integer END
                ELSE c.cluster_limit END AS lim
    FROM %[1]s.binding_candidates c
    WHERE NOT EXISTS (SELECT 1 FROM existing)
      AND (SELECT age FROM computed) <= $5
      AND (SELECT instances_read_at FROM computed) IS NOT NULL
      AND c.global_account_id = $2
      AND c.hyperscaler_type = $3
      AND c.eu_access = $4
      AND NOT EXISTS (SELECT 1 FROM %[1]s.withdrawn_bindings w WHERE w.binding_name = c.binding_name)
),
live AS NOT MATERIALIZED (
    SELECT i.instance_id, i.subscription_secret_name AS binding_name, i.created_at,
           coalesce((i.subscription_global_account_id <> '' AND i.subscription_global_account_id = $2)
                 OR (i.global_account_id = $2 AND i.subscription_global_account_id = ''), false) AS owned
    FROM instances i
    WHERE i.deleted_at = '0001-01-01 00:00:00+00'
),
kept AS (
    SELECT s.binding_name, count(*) AS n
    FROM %[1]s.snapshot_instances s
    JOIN live i ON i.instance_id = s.instance_id AND i.binding_name = s.binding_name AND i.owned
    WHERE $2 <> '' AND s.owner = $2 AND s.binding_name IN (SELECT binding_name FROM grp)
    GROUP BY s.binding_name
),
since AS (
    SELECT i.instance_id, i.binding_name, i.owned
    FROM live i
    WHERE i.created_at > (SELECT instances_read_at FROM computed) - make_interval(secs => $10)
      AND i.created_at > now() - interval '%[2]d seconds'
      AND i.binding_name IN (SELECT binding_name FROM grp)
    UNION
    SELECT i.instance_id, i.binding_name, i.owned
    FROM %[1]s.snapshot_instances s
    JOIN live i ON i.instance_id = s.instance_id
    WHERE s.binding_name = '' AND ($2 = '' OR s.owner = $2) AND i.binding_name IN (SELECT binding_name FROM grp)
),
added AS (
    SELECT p.binding_name, count(*) AS n
    FROM since p
    WHERE (p.owned OR $2 = '')
      AND NOT EXISTS (SELECT 1 FROM %[1]s.snapshot_instances s
                      WHERE s.instance_id = p.instance_id AND s.binding_name = p.binding_name AND ($2 = '' OR s.owner = $2))
    GROUP BY p.binding_name
),
pending AS (
    SELECT r.binding_name, count(*) AS n
    FROM %[1]s.binding_reservations r
    JOIN live i ON i.instance_id = r.instance_id AND coalesce(i.binding_name, '') = ''
    WHERE r.binding_name IN (SELECT binding_name FROM grp)
    GROUP BY r.binding_name
),
load AS (
    SELECT g.binding_name, g.lim, g.guarded, g.picks,
           CASE WHEN $2 = '' THEN g.effective_count + coalesce(a.n, 0)
                ELSE coalesce(k.n, 0) + coalesce(a.n, 0) END AS now_count,
           CASE WHEN $2 = '' THEN 0 ELSE greatest(g.effective_count - g.db_count, 0) END AS unknown_shoots,
           coalesce(p.n, 0) AS pending
    FROM grp g
    LEFT JOIN kept k ON k.binding_name = g.binding_name
    LEFT JOIN added a ON a.binding_name = g.binding_name
    LEFT JOIN pending p ON p.binding_name = g.binding_name
),
guard AS (
    SELECT $2 <> '' AND coalesce(sum(now_count), 0) = 0 AND
           CASE WHEN $6 THEN $7 AND $9::integer > 0 AND count(*) >= $9::integer
                ELSE coalesce(bool_or(guarded), false) END AS guarded
    FROM load
),
unsure AS (
    SELECT i.binding_name
    FROM live i
    WHERE i.owned AND coalesce(i.binding_name, '') <> ''
      AND i.created_at > (SELECT instances_read_at FROM computed) - make_interval(secs => $10)
      AND i.created_at > now() - interval '%[2]d seconds'
    UNION
    SELECT i.binding_name
    FROM %[1]s.snapshot_instances s
    JOIN live i ON i.instance_id = s.instance_id AND i.owned AND coalesce(i.binding_name, '') <> ''
    WHERE s.binding_name = '' AND s.owner = $2
),
picked AS MATERIALIZED (
    SELECT c.binding_name
    FROM %[1]s.binding_candidates c
    JOIN load l ON l.binding_name = c.binding_name
    WHERE NOT (SELECT guarded FROM guard)
      AND (l.lim IS NULL OR l.now_count + l.unknown_shoots + l.pending + (c.picks - l.picks) < l.lim)
    -- A shared pool spreads clusters over its least used binding; a GA with
    -- a limit fills its most populated binding below it; a GA without one
    -- keeps the first binding by name.
    ORDER BY CASE WHEN $2 = '' THEN l.now_count + l.pending END,
             CASE WHEN $2 <> '' AND l.lim IS NOT NULL THEN l.now_count + l.pending END DESC,
             c.binding_name COLLATE "C"
    LIMIT 1
    FOR UPDATE OF c
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
    SET reserved = c.reserved + 1, picks = c.picks + 1
    FROM reservation r
    WHERE c.binding_name = r.binding_name
    RETURNING c.binding_name
)
SELECT coalesce((SELECT binding_name FROM existing WHERE NOT void), (SELECT binding_name FROM bumped)),
       EXISTS (SELECT 1 FROM existing WHERE void),
       (SELECT count(*) FROM picked),
       (SELECT guarded FROM guard),
       (SELECT count(*) FROM grp),
       (SELECT age FROM computed),
       (SELECT instances_read_at IS NOT NULL FROM computed),
       CASE WHEN $2 <> '' AND NOT EXISTS (SELECT 1 FROM picked) THEN EXISTS (
           SELECT 1 FROM unsure u
           WHERE NOT EXISTS (SELECT 1 FROM %[1]s.binding_candidates c
                             WHERE c.binding_name = u.binding_name AND c.global_account_id IN ($2, '')
                               AND NOT EXISTS (SELECT 1 FROM %[1]s.withdrawn_bindings w WHERE w.binding_name = c.binding_name)))
       ELSE false END`

// placementMargin widens the window in which NextBinding looks for
// clusters placed since the snapshot: KEB stamps created_at by its own
// clock when it creates the row, which can commit a moment later or run a
// little behind the database's clock.
const placementMargin = 10 * time.Minute

// releaseVoidTemplate drops instance $1's void reservation and takes it
// off the counter of the row it was counted on, if that row is still the
// reservation's GA's and pool's.
const releaseVoidTemplate = `
WITH gone AS (
    DELETE FROM %[1]s.binding_reservations WHERE instance_id = $1
    RETURNING binding_name, global_account_id, hyperscaler_type, eu_access
)
UPDATE %[1]s.binding_candidates c
SET reserved = greatest(c.reserved - 1, 0)
FROM gone g
WHERE c.binding_name = g.binding_name AND c.global_account_id = g.global_account_id
  AND c.hyperscaler_type = g.hyperscaler_type AND c.eu_access = g.eu_access`

// NextBindingSQL returns the statement NextBinding runs, for schema and
// the default MaxAge.
func NextBindingSQL(schema string) (string, error) {
	return nextBindingSQL(schema, DefaultMaxAge)
}

// nextBindingSQL returns the statement for schema and maxAge. The text
// depends on maxAge alone beside the schema, so a caller with one MaxAge
// sends one statement, which a driver can prepare once.
func nextBindingSQL(schema string, maxAge time.Duration) (string, error) {
	if err := CheckSchema(schema); err != nil {
		return "", err
	}
	// Rounded up: the bound may only ever reach further back.
	window := int64(math.Ceil((maxAge + placementMargin).Seconds()))
	return fmt.Sprintf(nextBindingTemplate, schemaOrDefault(schema), window), nil
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
// race with a concurrent call for the same instance, or after dropping a
// void reservation; the next ask finds the winner's reservation or picks.
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

// ErrNoSharedBinding is NextBinding's answer for a shared pool that holds
// no binding: KEB never claims a shared binding, it fails the provisioning
// as getSharedCredentialsName does when its selector finds none.
var ErrNoSharedBinding = errors.New("the shared pool holds no credentials binding")

// Pick is NextBinding's answer.
type Pick struct {
	// Binding is the binding to provision the cluster on; "" with ClaimNew.
	Binding string
	// ClaimNew: none of the GA's bindings in the pool is below its limit;
	// KEB claims a new binding from the pool, then calls RecordClaim.
	// Never for a shared pool.
	ClaimNew bool
	// Held is, with ClaimNew, how many bindings of the pool the GA holds
	// now, all at their limit; 0 means its first binding of the pool.
	Held int
	// TableAge is the age of the snapshot the table was computed from, by
	// the database's clock, when NextBinding read it.
	TableAge time.Duration
}

// NextBinding names the binding for req's cluster and reserves a place in
// it, as KEB's rules choose at this moment: the table's snapshot plus what
// KEB's instances table shows since. Its answers:
//   - Pick.Binding: provision on it. A retry for an instance that already
//     has its binding gets that binding again, whatever the table's age.
//   - Pick.ClaimNew: a dedicated pool where none of the GA's bindings is
//     below its limit, or the GA holds none; KEB claims one, then calls
//     RecordClaim.
//   - ErrGuarded: KEB's guard stops the GA; KEB fails the provisioning.
//   - ErrNoSharedBinding: a shared pool without a binding; KEB fails the
//     provisioning.
//   - ErrStale: the table is older than req.MaxAge or was never computed;
//     KEB takes its live path.
//   - any other error (the database): KEB takes its live path.
func NextBinding(ctx context.Context, db Querier, req Request) (Pick, error) {
	if strings.TrimSpace(req.InstanceID) == "" {
		return Pick{}, errors.New("next binding: instance id is empty")
	}
	if strings.TrimSpace(req.HyperscalerType) == "" {
		return Pick{}, fmt.Errorf("next binding for instance %q: hyperscaler type is empty", req.InstanceID)
	}
	maxAge := req.maxAge()
	query, err := nextBindingSQL(req.Schema, maxAge)
	if err != nil {
		return Pick{}, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
	}
	given, multi, limit, minGuard := req.account()
	for attempt := 0; attempt < lostRaceAttempts; attempt++ {
		var binding sql.NullString
		var void, guarded, listed, unsure bool
		var picked, held int
		var age sql.NullFloat64
		err := queryRowPrepared(ctx, db, query, req.InstanceID, req.GlobalAccountID, req.HyperscalerType, req.EUAccess,
			maxAge.Seconds(), given, multi, limit, minGuard, placementMargin.Seconds()).
			Scan(&binding, &void, &picked, &guarded, &held, &age, &listed, &unsure)
		tableAge := time.Duration(age.Float64 * float64(time.Second))
		switch {
		case err != nil:
			return Pick{}, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
		case binding.Valid:
			return Pick{Binding: binding.String, TableAge: tableAge}, nil
		case void:
			if err := releaseVoid(ctx, db, req); err != nil {
				return Pick{}, err
			}
			continue
		case !age.Valid || !listed:
			return Pick{}, fmt.Errorf("next binding for instance %q: the job has not computed the table yet: %w", req.InstanceID, ErrStale)
		case tableAge > maxAge:
			return Pick{TableAge: tableAge}, fmt.Errorf("next binding for instance %q: table computed %s ago, more than %s: %w",
				req.InstanceID, tableAge.Round(time.Second), maxAge, ErrStale)
		case guarded:
			return Pick{TableAge: tableAge}, fmt.Errorf("next binding for instance %q, global account %q, pool %s (euAccess %t): %w",
				req.InstanceID, req.GlobalAccountID, req.HyperscalerType, req.EUAccess, ErrGuarded)
		case picked == 0 && req.GlobalAccountID == "":
			return Pick{TableAge: tableAge}, fmt.Errorf("next binding for instance %q, pool %s (euAccess %t): %w",
				req.InstanceID, req.HyperscalerType, req.EUAccess, ErrNoSharedBinding)
		case picked == 0 && unsure:
			return Pick{TableAge: tableAge}, fmt.Errorf("next binding for instance %q, global account %q: the account holds a binding "+
				"the table has not listed yet (claimed on KEB's live path since the snapshot): %w", req.InstanceID, req.GlobalAccountID, ErrStale)
		case picked == 0:
			return Pick{ClaimNew: true, Held: held, TableAge: tableAge}, nil
		}
		// picked but not bumped: a concurrent call for the instance won.
	}
	return Pick{}, fmt.Errorf("next binding for instance %q: a concurrent call for the same instance kept winning", req.InstanceID)
}

// releaseVoid drops the instance's reservation on a binding since withdrawn
// or handed to another GA, so that the next ask picks anew.
func releaseVoid(ctx context.Context, db Querier, req Request) error {
	var n sql.NullInt64
	err := db.QueryRowContext(ctx, fmt.Sprintf(releaseVoidTemplate+"\nRETURNING 1", schemaOrDefault(req.Schema)), req.InstanceID).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("next binding for instance %q: drop its reservation on a withdrawn binding: %w", req.InstanceID, err)
	}
	return nil
}
