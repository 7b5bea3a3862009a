package provisioning

import (
	"fmt"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// The read path's statements: every one that writes the job's tables from
// KEB's side is here (the two picks, dropping a void reservation, a
// withdrawal, whether KEB's free step made it or Gardener rejected a
// proposal, recording a claim, and a claim's lease). Each text is fixed by the schema, so a
// caller sends a handful of texts and a Client prepares each once per
// connection.
//
// Both answer seen_age, how long ago the table had seen every change of
// Gardener's bindings (candidates_computed.gardener_seen_at, which serve's
// watch proves and writes; NULL when nobody has): the caller trusts the
// table's tenant, pool and dirty state when it is recent, and has Gardener
// confirm otherwise.
//
// The picks are two statements, one per kind of pool, so that nothing
// branches on a parameter: each has one plan, which PostgreSQL can keep
// generic. Both count each candidate binding's active instances in KEB's
// instances table at the moment KEB asks, by binding, through the index
// KEB adds (schema.KEBIndexUp): the cost is the GA's own bindings and
// their clusters, whatever other GAs do.
//
// Who writes the candidate table (binding_candidates), so that the job's
// rewrite and KEB's calls never write the same column of a row:
//   - the job's rewrite writes every column but picks: the rows, their
//     values and which bindings are in the table at all;
//   - a pick and RecordClaim bump picks, and nothing else of a row the job
//     wrote;
//   - RecordClaim inserts the row of a binding KEB has just claimed, which
//     no snapshot lists yet (recorded_claims keeps the rewrite from
//     removing it until one does), and takes over a row another GA still
//     held (the account was cleaned and claimed anew).
// What is reserved on a binding is the reservations' rows, counted where
// it matters; the column reserved is no longer written (a module of an
// earlier release still bumps it, which nothing reads).
//
// Why a pick is safe under READ COMMITTED, with many KEB replicas picking
// at once and the job rewriting the table now and then:
//   - picked locks the chosen row (FOR UPDATE OF c). A concurrent pick that
//     chose the same row waits for this one to commit, and PostgreSQL then
//     re-evaluates the WHERE clause on the row's newest version: its picks
//     column, bumped by every pick and claim and by nothing else, less the
//     value this statement's snapshot read (grp) is the number of picks
//     committed meanwhile, which the snapshot's counts cannot see. A row
//     that reached its limit is skipped and the next one in order is taken.
//   - The reservation row is inserted first and the counter bumped only
//     when the insert happened, so two concurrent calls for one instance id
//     cannot both count; the loser sees picked but no bumped row, and asks
//     again to find the winner's reservation.
//   - A reservation on a binding since withdrawn or rejected, or whose row
//     another GA or pool holds now, is void: the statement says so, and the
//     caller drops it and asks again.
//   - A reservation counts while its instance is active and KEB has not
//     written a binding into it (pending); once KEB writes the binding, the
//     instance counts on the binding itself. KEB creates the instance row
//     at the provision request, before it resolves the binding: a pick for
//     an instance without its row counts nothing for it.
//   - Ties go to the name first in byte order (COLLATE "C"), the order the
//     API server lists bindings in, whatever the database's collation.
//   - picked is MATERIALIZED so that it runs exactly once.

// pickCommon is what both picks start from; %[1]s is the schema, %[2]s the
// parameter holding MaxAge in seconds, %[3]s the group's condition on the
// GA, %[4]s the parameter holding how recently the table must have seen
// Gardener for the pick to reserve anything (NULL: whenever; a client that
// cannot confirm sets it, so that an answer it cannot use reserves
// nothing).
const pickCommon = `
WITH computed AS (
    SELECT extract(epoch FROM now() - max(computed_at)) AS age,
           extract(epoch FROM now() - max(gardener_seen_at)) AS seen_age
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
    SELECT c.binding_name, c.db_count, c.effective_count, c.guarded, c.picks, c.cluster_limit
    FROM %[1]s.binding_candidates c
    WHERE NOT EXISTS (SELECT 1 FROM existing)
      AND (SELECT age FROM computed) <= %[2]s
      AND (%[4]s::float8 IS NULL OR (SELECT seen_age FROM computed) <= %[4]s::float8)
      AND %[3]s AND c.hyperscaler_type = $2 AND c.eu_access = $3
      AND NOT EXISTS (SELECT 1 FROM %[1]s.withdrawn_bindings w WHERE w.binding_name = c.binding_name)
),
pending AS (
    SELECT r.binding_name, count(*) AS n
    FROM %[1]s.binding_reservations r
    JOIN instances i ON i.instance_id = r.instance_id AND i.` + schema.ActiveInstance + `
                    AND coalesce(i.subscription_secret_name, '') = ''
    WHERE r.binding_name IN (SELECT binding_name FROM grp)
    GROUP BY r.binding_name
),`

// pickReserve reserves the picked row for the instance and bumps its
// counters; %[1]s is the schema, %[2]s the GA to record.
const pickReserve = `
reservation AS (
    INSERT INTO %[1]s.binding_reservations
        (instance_id, binding_name, global_account_id, hyperscaler_type, eu_access)
    SELECT $1, binding_name, %[2]s, $2, $3 FROM picked
    ON CONFLICT (instance_id) DO NOTHING
    RETURNING binding_name
),
bumped AS (
    UPDATE %[1]s.binding_candidates c
    SET picks = c.picks + 1
    FROM reservation r
    WHERE c.binding_name = r.binding_name
    RETURNING c.binding_name
)
SELECT coalesce((SELECT binding_name FROM existing WHERE NOT void), (SELECT binding_name FROM bumped)) AS binding,
       EXISTS (SELECT 1 FROM existing WHERE void) AS void,
       EXISTS (SELECT 1 FROM picked) AS picked,
       (SELECT age FROM computed) AS age,
       (SELECT seen_age FROM computed) AS seen_age`

// dedicatedPick is the pick for a GA's own bindings of a pool. Parameters:
// $1 instance id, $2 hyperscaler type, $3 EU access, $4 GA, $5 the oldest
// table answered from in seconds, $6 the table's limit and guard apply
// (the request carries no KEB decision), $7 KEB's limit (NULL: none), $8
// KEB's minBindingsForGuard (0: none), $9 the longest the table may be
// behind Gardener for the pick to reserve (NULL: no bound).
//
//   - mine is KEB's count now (GetInstanceCountPerBinding): the binding's
//     active instances the GA owns. Another GA's instances on the binding
//     count for that GA, as KEB counts them (a subaccount moved to another
//     GA keeps its binding); whether the binding is still the GA's is
//     Gardener's to confirm (tenantName), not the instances'.
//   - A binding whose Gardener shoots outnumbered KEB's instances at the
//     snapshot keeps that excess (effective_count - db_count): the job's
//     one deviation, a binding Gardener shows full is never filled further.
//   - The guard is KEB's: at least minBindingsForGuard bindings, none with
//     an active instance of the GA now, and none with a reservation in
//     flight (a cluster the table placed whose binding KEB has not written
//     yet: KEB's workers asking at once fill a claimed binding before the
//     first of them writes it, and the GA is not idle). The caller has Gardener confirm
//     that the table's bindings (held) are the GA's bindings now before it
//     answers a guard or a claim.
//   - Order: the most populated binding below the limit; without a limit
//     (a GA not on KEB's allowlist) the first by name.
const dedicatedPick = `
placed AS (
    SELECT g.binding_name, count(*) FILTER (WHERE %[2]s = $4) AS mine
    FROM grp g
    JOIN instances i ON i.subscription_secret_name = g.binding_name AND i.` + schema.ActiveInstance + `
    GROUP BY g.binding_name
),
load AS (
    SELECT g.binding_name, g.picks, g.guarded,
           CASE WHEN $6 THEN g.cluster_limit ELSE $7::integer END AS lim,
           coalesce(p.mine, 0) AS mine,
           greatest(g.effective_count - g.db_count, 0) AS unknown_shoots,
           coalesce(r.n, 0) AS pending
    FROM grp g
    LEFT JOIN placed p ON p.binding_name = g.binding_name
    LEFT JOIN pending r ON r.binding_name = g.binding_name
),
guard AS (
    SELECT coalesce(sum(mine), 0) = 0 AND coalesce(sum(pending), 0) = 0 AND
           CASE WHEN $6 THEN coalesce(bool_or(guarded), false)
                ELSE $8::integer > 0 AND count(*) >= $8::integer END AS guarded
    FROM load
),
picked AS MATERIALIZED (
    SELECT c.binding_name
    FROM %[1]s.binding_candidates c
    JOIN load l ON l.binding_name = c.binding_name
    WHERE NOT (SELECT guarded FROM guard)
      AND (l.lim IS NULL OR l.mine + l.unknown_shoots + l.pending + (c.picks - l.picks) < l.lim)
    ORDER BY CASE WHEN l.lim IS NOT NULL THEN l.mine + l.pending END DESC, c.binding_name COLLATE "C"
    LIMIT 1
    FOR UPDATE OF c
),`

// dedicatedResult adds what only a dedicated pick answers. withdrawn counts
// the GA's rows of the pool that are withdrawn: the table's group lacks
// them, and Gardener may show one clean and the GA's again (the cleanup
// and a claim on KEB's live path since the withdrawal), so a ClaimNew or a
// guard over such a group needs Gardener's list, however recently the
// table saw Gardener's labels.
const dedicatedResult = `,
       (SELECT guarded FROM guard) AS guarded,
       (SELECT string_agg(binding_name, ',' ORDER BY binding_name COLLATE "C") FROM grp) AS held,
       (SELECT count(*) FROM %[1]s.binding_candidates c
        WHERE c.global_account_id = $4 AND c.hyperscaler_type = $2 AND c.eu_access = $3
          AND EXISTS (SELECT 1 FROM %[1]s.withdrawn_bindings w WHERE w.binding_name = c.binding_name)) AS withdrawn`

// sharedPick is the pick in a shared pool. Parameters: $1 instance id, $2
// hyperscaler type, $3 EU access, $4 the oldest table answered from in
// seconds, $5 as the dedicated pick's $9. KEB takes the binding the fewest shoots name; the table orders
// by the shoots at the snapshot beyond KEB's instances then, plus KEB's
// active instances on the binding now and its reservations.
const sharedPick = `
placed AS (
    SELECT g.binding_name, count(*) AS n
    FROM grp g
    JOIN instances i ON i.subscription_secret_name = g.binding_name AND i.` + schema.ActiveInstance + `
    GROUP BY g.binding_name
),
picked AS MATERIALIZED (
    SELECT c.binding_name
    FROM %[1]s.binding_candidates c
    JOIN grp g ON g.binding_name = c.binding_name
    LEFT JOIN placed p ON p.binding_name = g.binding_name
    LEFT JOIN pending r ON r.binding_name = g.binding_name
    ORDER BY greatest(g.effective_count - g.db_count, 0) + coalesce(p.n, 0) + coalesce(r.n, 0), c.binding_name COLLATE "C"
    LIMIT 1
    FOR UPDATE OF c
),`

// pickTexts are the two picks' texts for one schema.
type pickTexts struct{ dedicated, shared string }

// pickSQL returns the picks for schema.
func pickSQL(name string) (pickTexts, error) {
	if err := schema.Check(name); err != nil {
		return pickTexts{}, err
	}
	s := schema.OrDefault(name)
	return pickTexts{
		dedicated: fmt.Sprintf(pickCommon, s, "$5", "c.global_account_id = $4", "$9") +
			fmt.Sprintf(dedicatedPick, s, schema.Owner("i")) +
			fmt.Sprintf(pickReserve, s, "$4") + fmt.Sprintf(dedicatedResult, s),
		shared: fmt.Sprintf(pickCommon, s, "$4", "c.global_account_id = ''", "$5") +
			fmt.Sprintf(sharedPick, s) +
			fmt.Sprintf(pickReserve, s, "''"),
	}, nil
}

// releaseVoidTemplate drops instance $1's void reservation.
const releaseVoidTemplate = `
DELETE FROM %[1]s.binding_reservations WHERE instance_id = $1`

// withdrawTemplate takes binding $1 out of every pick with reason $2 until
// a snapshot taken after it shows the binding again (the job's candidates
// run ends it), or until RecordClaim ends it. A second call keeps the first
// time and reason: a retry must not push the end on.
const withdrawTemplate = `
INSERT INTO %[1]s.withdrawn_bindings AS w (binding_name, withdrawn_at, reason)
VALUES ($1, now(), $2)
ON CONFLICT (binding_name) DO UPDATE SET withdrawn_at = w.withdrawn_at
RETURNING w.binding_name`

// withdrawSQL returns the withdrawal for schema.
func withdrawSQL(name string) (string, error) {
	if err := schema.Check(name); err != nil {
		return "", err
	}
	return fmt.Sprintf(withdrawTemplate, schema.OrDefault(name)), nil
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
ended AS (
    -- The claim is in the table: the GA's and pool's lease is over, and
    -- the retried requests are placed on the claimed binding.
    DELETE FROM %[1]s.claim_leases
    WHERE global_account_id = $2 AND hyperscaler_type = $3 AND eu_access = $4
      AND NOT EXISTS (SELECT 1 FROM existing)
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
         effective_count, cluster_limit, headroom, selectable, rank, computed_at)
    SELECT r.binding_name, $2, $3, $4, 0, 0, 0, $6::integer, $6::integer, true,
           (SELECT coalesce(max(o.rank), 0) + 1
            FROM %[1]s.binding_candidates o
            WHERE o.global_account_id = $2 AND o.hyperscaler_type = $3 AND o.eu_access = $4),
           now()
    FROM reservation r
    ON CONFLICT (binding_name) DO UPDATE
    SET db_count = CASE WHEN (c.global_account_id, c.hyperscaler_type, c.eu_access) = ($2, $3, $4)
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
SELECT coalesce((SELECT binding_name FROM existing), (SELECT binding_name FROM listed)) AS holds`

// takeLeaseTemplate takes the claim lease of a GA and pool for an instance
// when nobody holds it, when it expired, or when the instance holds it
// already (renewed); %[1]s is the schema. Parameters: $1 GA, $2 hyperscaler
// type, $3 EU access, $4 instance id, $5 the lease in seconds. Two requests
// taking an expired lease at once: the second waits for the first's row
// lock, finds the lease live and another's, and takes nothing. Expiry is
// the database's clock, the same for every replica.
const takeLeaseTemplate = `
INSERT INTO %[1]s.claim_leases AS l (global_account_id, hyperscaler_type, eu_access, instance_id, expires_at)
VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
ON CONFLICT (global_account_id, hyperscaler_type, eu_access) DO UPDATE
SET instance_id = excluded.instance_id, expires_at = excluded.expires_at
WHERE l.expires_at <= now() OR l.instance_id = excluded.instance_id
RETURNING l.instance_id AS taken`

// leaseTemplate reads the claim lease of a GA and pool: who holds it and
// how long it has left; no row when none. Parameters: $1 GA, $2 hyperscaler
// type, $3 EU access.
const leaseTemplate = `
SELECT coalesce(max(instance_id), '') AS holder,
       coalesce(max(extract(epoch FROM expires_at - now())), 0) AS left_seconds
FROM %[1]s.claim_leases
WHERE global_account_id = $1 AND hyperscaler_type = $2 AND eu_access = $3`

// abandonLeaseTemplate ends the lease of a GA and pool that instance $4
// holds. Parameters: $1 GA, $2 hyperscaler type, $3 EU access, $4 instance.
const abandonLeaseTemplate = `
DELETE FROM %[1]s.claim_leases
WHERE global_account_id = $1 AND hyperscaler_type = $2 AND eu_access = $3 AND instance_id = $4`
