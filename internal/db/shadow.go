package db

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm/clause"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// placedInstancesSQL lists the instances KEB wrote with a binding since $1
// (created_at, the database's clock), deleted ones included, each with its
// owning GA as the counts read it, the moment of KEB's pick (%[2]s, see
// resolveStepSQL) and whether the shadow job compared it.
const placedInstancesSQL = `
SELECT i.instance_id,
       CASE WHEN coalesce(i.subscription_global_account_id, '') <> ''
            THEN i.subscription_global_account_id
            ELSE i.global_account_id
       END,
       i.subscription_secret_name,
       i.created_at,
       r.at,
       s.instance_id IS NOT NULL
FROM instances i
%[2]s
LEFT JOIN %[1]s.shadow_picks s ON s.instance_id = i.instance_id
WHERE i.created_at >= $1 AND coalesce(i.subscription_secret_name, '') <> ''`

// resolveStepSQL finds when KEB ran the step that wrote the instance's
// binding. KEB writes the binding in the resolve step
// (internal/process/provisioning/resolve_credentials_binding.go,
// ResolveCredentialsBindingStep.Run, updateInstance), and the row's
// updated_at of that write is overwritten by a later step
// (generate_runtime_id_step.go updates the row again). What survives is KEB's
// event log: its staged manager (internal/process/staged_manager.go, Execute
// and runStep) writes the event "processing step: Resolve_Credentials_Binding"
// before each run of the step, and "step Resolve_Credentials_Binding sleeping
// for ..." before each retry within a run, on the provisioning operation, by
// KEB's clock. The binding is written in the run that follows the last of
// them: every step is a stage of its own, and a finished stage never runs
// again. Index probes only: operations_by_instance_id, then
// events_operation_id.
const resolveStepSQL = `LEFT JOIN LATERAL (
    SELECT max(e.created_at) AS at
    FROM operations o
    JOIN events e ON e.operation_id = o.id
    WHERE o.instance_id = i.instance_id AND o.type = 'provision'
      AND (e.message = 'processing step: Resolve_Credentials_Binding'
           OR e.message LIKE 'step Resolve\_Credentials\_Binding sleeping for %')
) r ON true`

// withoutResolveStep stands in for resolveStepSQL when KEB's events cannot
// be read: every pick is then timed by its provision request.
const withoutResolveStep = `LEFT JOIN LATERAL (SELECT NULL::timestamptz AS at) r ON true`

// eventsReadableSQL says whether the job may read the columns of KEB's
// operations and events that resolveStepSQL reads: the tables exist (KEB
// creates them whether or not its events are enabled) and the role holds
// SELECT on each column, granted per table or per column.
const eventsReadableSQL = `
SELECT bool_and(coalesce(has_column_privilege(to_regclass(t), c, 'SELECT'), false))
FROM (VALUES ('operations', 'id'), ('operations', 'instance_id'), ('operations', 'type'),
             ('events', 'operation_id'), ('events', 'message'), ('events', 'created_at')) AS needed (t, c)`

// ShadowInputs reads KEB's picks since `since` and the candidate table's
// rewrites over that time. Picks in the maxAge before it come along as
// already compared: the table would have reserved for them, and that shapes
// its answers to the picks after. A pick is timed by KEB's resolve step
// where KEB's events say when it ran, by the provision request otherwise
// (KEB's events disabled or pruned, or not readable to the job's role).
func (s *Store) ShadowInputs(ctx context.Context, since time.Time, maxAge time.Duration) (hap.ShadowInput, error) {
	var in hap.ShadowInput
	db := s.db.WithContext(ctx)
	from := since.Add(-maxAge)
	if err := db.Raw(eventsReadableSQL).Scan(&in.EventsReadable).Error; err != nil {
		return in, s.wrap("look up whether KEB's events can be read", err)
	}
	resolved := withoutResolveStep
	if in.EventsReadable {
		resolved = resolveStepSQL
	}
	rows, err := db.Raw(fmt.Sprintf(placedInstancesSQL, s.schema, resolved), from).Rows()
	if err != nil {
		return in, s.wrap("read KEB's placed instances", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p hap.PlacedInstance
		var resolvedAt sql.NullTime
		if err := rows.Scan(&p.InstanceID, &p.GlobalAccountID, &p.BindingName, &p.At, &resolvedAt, &p.Compared); err != nil {
			return in, s.wrap("read KEB's placed instances", err)
		}
		if resolvedAt.Valid {
			// KEB's clock wrote the event, the database's the row: a
			// skew never puts the pick before the request.
			p.At, p.ByResolveStep = later(p.At, resolvedAt.Time), true
		}
		p.Compared = p.Compared || p.At.Before(since)
		in.Placed = append(in.Placed, p)
	}
	if err := rows.Err(); err != nil {
		return in, s.wrap("read KEB's placed instances", err)
	}

	var rewrites []struct {
		WrittenAt  time.Time `gorm:"column:written_at"`
		SnapshotAt time.Time `gorm:"column:snapshot_at"`
	}
	if err := db.Raw(`SELECT written_at, snapshot_at FROM `+s.table("candidate_rewrites")+`
		WHERE written_at >= (SELECT coalesce(max(written_at), '-infinity') FROM `+s.table("candidate_rewrites")+` WHERE written_at <= ?)
		ORDER BY written_at`, from).Scan(&rewrites).Error; err != nil {
		return in, s.wrap("read the candidate table's rewrites", err)
	}
	for _, r := range rewrites {
		in.Rewrites = append(in.Rewrites, hap.Rewrite{WrittenAt: r.WrittenAt, SnapshotAt: r.SnapshotAt})
	}
	return in, nil
}

// CandidateVersions reads the candidate table's rows of groups as they
// stood from `from` on: every version still held then or written since.
// The query narrows to the groups' GAs and the pools are matched here, as
// the rows stream in: no more than the groups' rows is ever held.
func (s *Store) CandidateVersions(ctx context.Context, from time.Time, groups []hap.ShadowGroup) ([]hap.CandidateVersion, error) {
	wanted := make(map[hap.ShadowGroup]bool, len(groups))
	var gas []string
	for _, g := range groups {
		if !wanted[g] {
			wanted[g] = true
			gas = append(gas, g.GlobalAccountID)
		}
	}
	slices.Sort(gas)
	gas = slices.Compact(gas)
	var out []hap.CandidateVersion
	for start := 0; start < len(gas); start += batchSize {
		rows, err := s.db.WithContext(ctx).Raw(`SELECT binding_name, global_account_id, hyperscaler_type, eu_access, db_count, shoot_count,
			effective_count, cluster_limit, selectable, guarded, rank, valid_from, valid_to FROM `+s.table("candidate_history")+`
			WHERE (valid_to IS NULL OR valid_to > ?) AND global_account_id IN ?`, from, gas[start:min(start+batchSize, len(gas))]).Rows()
		if err != nil {
			return nil, s.wrap("read the candidate history", err)
		}
		out, err = appendVersions(out, rows, wanted)
		if err != nil {
			return nil, s.wrap("read the candidate history", err)
		}
	}
	return out, nil
}

// appendVersions appends the versions of rows that belong to a wanted
// group, and closes rows.
func appendVersions(out []hap.CandidateVersion, rows *sql.Rows, wanted map[hap.ShadowGroup]bool) ([]hap.CandidateVersion, error) {
	defer rows.Close()
	for rows.Next() {
		var v hap.CandidateVersion
		var validTo *time.Time
		if err := rows.Scan(&v.BindingName, &v.GlobalAccountID, &v.Pool.HyperscalerType, &v.Pool.EUAccess, &v.DBCount, &v.ShootCount,
			&v.EffectiveCount, &v.Limit, &v.Selectable, &v.Guarded, &v.Rank, &v.ValidFrom, &validTo); err != nil {
			return out, err
		}
		if !wanted[hap.ShadowGroup{GlobalAccountID: v.GlobalAccountID, Pool: v.Pool}] {
			continue
		}
		if validTo != nil {
			v.ValidTo = *validTo
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

type shadowRow struct {
	InstanceID      string     `gorm:"column:instance_id"`
	GlobalAccountID string     `gorm:"column:global_account_id"`
	HyperscalerType string     `gorm:"column:hyperscaler_type"`
	EUAccess        bool       `gorm:"column:eu_access"`
	KEBBinding      string     `gorm:"column:keb_binding"`
	TableAnswer     string     `gorm:"column:table_answer"`
	Outcome         string     `gorm:"column:outcome"`
	Detail          string     `gorm:"column:detail"`
	PickedAt        time.Time  `gorm:"column:picked_at"`
	SnapshotAt      *time.Time `gorm:"column:snapshot_at"`
}

// RecordShadow keeps each compared pick once and forgets, with the history
// that only served them, what is older than retention.
func (s *Store) RecordShadow(ctx context.Context, results []hap.ShadowResult, retention, maxAge time.Duration) error {
	db := s.db.WithContext(ctx)
	if len(results) > 0 {
		rows := make([]shadowRow, len(results))
		for i, r := range results {
			rows[i] = shadowRow{InstanceID: r.InstanceID, GlobalAccountID: r.GlobalAccountID, HyperscalerType: r.Pool.HyperscalerType,
				EUAccess: r.Pool.EUAccess, KEBBinding: r.KEBBinding, TableAnswer: r.Table, Outcome: r.Outcome, Detail: r.Detail, PickedAt: r.At}
			if !r.SnapshotAt.IsZero() {
				at := r.SnapshotAt
				rows[i].SnapshotAt = &at
			}
		}
		if err := db.Table(s.table("shadow_picks")).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&rows, batchSize).Error; err != nil {
			return s.wrap("record compared picks", err)
		}
	}
	keep := retention + maxAge
	for _, prune := range []string{
		"DELETE FROM " + s.table("shadow_picks") + " WHERE picked_at < now() - make_interval(secs => ?)",
		"DELETE FROM " + s.table("candidate_history") + " WHERE valid_to < now() - make_interval(secs => ?)",
		// The newest rewrite stays whatever its age: it says how old the table is.
		"DELETE FROM " + s.table("candidate_rewrites") + " WHERE written_at < now() - make_interval(secs => ?)" +
			" AND written_at < (SELECT max(written_at) FROM " + s.table("candidate_rewrites") + ")",
	} {
		if err := db.Exec(prune, keep.Seconds()).Error; err != nil {
			return s.wrap("prune the shadow history", err)
		}
	}
	return nil
}

// ShadowPicks returns the picks compared since `since`, oldest first.
func (s *Store) ShadowPicks(ctx context.Context, since time.Time) (_ []hap.ShadowResult, err error) {
	defer func() { err = explain(err, s.schema) }()
	var rows []shadowRow
	if err := s.db.WithContext(ctx).Table(s.table("shadow_picks")).Where("picked_at >= ?", since).
		Order(`picked_at, instance_id COLLATE "C"`).Find(&rows).Error; err != nil {
		return nil, s.wrap("read compared picks", err)
	}
	out := make([]hap.ShadowResult, len(rows))
	for i, r := range rows {
		out[i] = hap.ShadowResult{InstanceID: r.InstanceID, GlobalAccountID: r.GlobalAccountID,
			Pool: hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess}, KEBBinding: r.KEBBinding, Table: r.TableAnswer,
			Outcome: r.Outcome, Detail: r.Detail, At: r.PickedAt}
		if r.SnapshotAt != nil {
			out[i].SnapshotAt = *r.SnapshotAt
		}
	}
	return out, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
