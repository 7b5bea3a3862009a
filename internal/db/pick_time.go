package db

import (
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// listInstancesSQL brings snapshot_instances to KEB's active instances now:
// each with its binding (” for none yet) and the GA whose count KEB puts it
// in (the owner countInstancesSQL names). One statement, so one snapshot of
// KEB's table; only the rows that changed are written, so a steady fleet
// costs one scan of each table and few writes.
const listInstancesSQL = `
WITH live AS (
    SELECT instance_id, coalesce(subscription_secret_name, '') AS binding_name,
           CASE WHEN subscription_global_account_id IS NULL THEN ''
                WHEN subscription_global_account_id <> '' THEN subscription_global_account_id
                ELSE global_account_id
           END AS owner
    FROM instances
    WHERE ` + activeInstance + `
),
gone AS (
    DELETE FROM %[1]s s
    WHERE NOT EXISTS (SELECT 1 FROM live l WHERE l.instance_id = s.instance_id)
    RETURNING 1
),
moved AS (
    UPDATE %[1]s s SET binding_name = l.binding_name, owner = l.owner
    FROM live l
    WHERE l.instance_id = s.instance_id AND (s.binding_name, s.owner) IS DISTINCT FROM (l.binding_name, l.owner)
    RETURNING 1
),
added AS (
    INSERT INTO %[1]s (instance_id, binding_name, owner)
    SELECT l.instance_id, l.binding_name, l.owner FROM live l
    WHERE NOT EXISTS (SELECT 1 FROM %[1]s s WHERE s.instance_id = l.instance_id)
    RETURNING 1
)
SELECT (SELECT count(*) FROM gone) + (SELECT count(*) FROM moved) + (SELECT count(*) FROM added)`

// listInstances lists KEB's active instances for the picks to come and
// returns when, by the database's clock: the transaction's start, no later
// than the statement's snapshot, so a placement is either in the list or
// created after that moment less provisioning's margin.
func (s *Store) listInstances(tx *gorm.DB) (time.Time, error) {
	var readAt time.Time
	if err := tx.Raw("SELECT now()").Scan(&readAt).Error; err != nil {
		return time.Time{}, fmt.Errorf("read the database's time: %w", err)
	}
	var changed int64
	if err := tx.Raw(fmt.Sprintf(listInstancesSQL, s.table("snapshot_instances"))).Scan(&changed).Error; err != nil {
		return time.Time{}, fmt.Errorf("list KEB's instances for provisioning: %w", err)
	}
	return readAt, nil
}

// claimSettle is how much older than the snapshot a recorded claim must be
// for the snapshot to speak for it: serve's snapshot comes from watch
// caches, which may trail the API server by a moment.
const claimSettle = time.Minute

// recordedClaim is a claim KEB recorded with provisioning.RecordClaim.
type recordedClaim struct {
	GlobalAccountID string
	Pool            hap.Pool
}

// holds says whether row is still the one the claim wrote: its GA and pool.
func (c recordedClaim) holds(row candidateRow) bool {
	return row.GlobalAccountID == c.GlobalAccountID && row.HyperscalerType == c.Pool.HyperscalerType && row.EUAccess == c.Pool.EUAccess
}

// sameGroup says whether the snapshot's row gives the binding to the GA and
// pool that claimed it: the snapshot saw the claim.
func (c recordedClaim) sameGroup(want hap.Candidate) bool {
	return want.GlobalAccountID == c.GlobalAccountID && want.Pool == c.Pool
}

// keepRecordedClaims ends the records of claims the snapshot taken at
// snapshotAt shows (made claimSettle or more before it) and returns the
// others, by binding.
func (s *Store) keepRecordedClaims(tx *gorm.DB, snapshotAt time.Time) (map[string]recordedClaim, error) {
	settled := snapshotAt.Add(-claimSettle)
	if err := tx.Exec("DELETE FROM "+s.table("recorded_claims")+" WHERE claimed_at <= ?", settled).Error; err != nil {
		return nil, fmt.Errorf("end recorded claims the snapshot shows: %w", err)
	}
	var rows []struct {
		BindingName     string
		GlobalAccountID string
		HyperscalerType string
		EUAccess        bool
	}
	if err := tx.Raw("SELECT binding_name, global_account_id, hyperscaler_type, eu_access FROM " + s.table("recorded_claims")).
		Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("read recorded claims: %w", err)
	}
	claims := make(map[string]recordedClaim, len(rows))
	for _, r := range rows {
		claims[r.BindingName] = recordedClaim{GlobalAccountID: r.GlobalAccountID, Pool: hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess}}
	}
	return claims, nil
}
