package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
)

// Instance is KEB's instances row, with KEB's column names. The job only
// reads it. The nullable columns are pointers because KEB's table allows
// NULL there even though it defaults to ”.
type Instance struct {
	InstanceID                  string     `gorm:"column:instance_id;primaryKey"`
	RuntimeID                   string     `gorm:"column:runtime_id"`
	GlobalAccountID             string     `gorm:"column:global_account_id"`
	SubscriptionGlobalAccountID *string    `gorm:"column:subscription_global_account_id"`
	SubAccountID                *string    `gorm:"column:sub_account_id"`
	SubscriptionSecretName      *string    `gorm:"column:subscription_secret_name"`
	Provider                    *string    `gorm:"column:provider"`
	ProviderRegion              *string    `gorm:"column:provider_region"`
	ServicePlanName             *string    `gorm:"column:service_plan_name"`
	ProvisioningParameters      string     `gorm:"column:provisioning_parameters"`
	CreatedAt                   time.Time  `gorm:"column:created_at"`
	UpdatedAt                   time.Time  `gorm:"column:updated_at"`
	DeletedAt                   time.Time  `gorm:"column:deleted_at"`
	ExpiredAt                   *time.Time `gorm:"column:expired_at"`
}

// TableName leaves the schema to the search_path, where KEB's table is
// found (public unless the connection says otherwise).
func (Instance) TableName() string { return "instances" }

// activeInstance is KEB's notion of a live instance: deleted_at still holds
// the zero time.
const activeInstance = provisioning.ActiveInstanceSQL

// countInstancesSQL is the one aggregate over KEB's table. The owning GA is
// the subscription GA when one is set, else the instance's GA, exactly as
// KEB's GetInstanceCountPerBinding (internal/storage/postsql/read.go) counts:
// its condition, "the subscription GA is not empty and is the GA, or the
// instance's GA is the GA and the subscription GA is empty", is NULL for a
// NULL subscription_global_account_id, so KEB counts such an instance for no
// GA at all. Its owner here is hap.NoOwner: the
// binding still holds it (totals, release), no GA's count includes it. KEB's
// table has no index on subscription_secret_name, so this is one sequential
// scan rather than one query per binding; KEB's owner is written once, in
// provisioning (OwnerSQL), for this count and the pick alike.
//
// Orderings are byte order (COLLATE "C") whatever the database's collation,
// the order KEB's API server lists names in.
var countInstancesSQL = `
SELECT * FROM (
    SELECT coalesce(subscription_secret_name, '') AS binding_name,
           ` + provisioning.OwnerSQL("instances") + ` AS global_account_id,
           count(*) AS active,
           json_agg(runtime_id ORDER BY runtime_id COLLATE "C")::text AS runtime_ids
    FROM instances
    WHERE ` + activeInstance + `
    GROUP BY 1, 2
) per_binding_and_owner
ORDER BY binding_name COLLATE "C", global_account_id COLLATE "C"`

// instanceCountRow is one row of countInstancesSQL, in its column order.
type instanceCountRow struct {
	BindingName     string
	GlobalAccountID string
	Active          int
	RuntimeIDs      string
}

// ReadInstanceCounts counts the active instances per binding and owning GA.
// The counts and the reservations they absorb are read in one REPEATABLE
// READ transaction: both come from the same snapshot, so a reservation is
// absorbed exactly when its instance is in the counts.
func (s *Store) ReadInstanceCounts(ctx context.Context) (_ hap.InstanceRead, err error) {
	defer func() { err = explain(err, s.schema) }()
	var read hap.InstanceRead
	// A dropped connection or a server restarting fails an attempt; the
	// whole read is repeated on a fresh one (see retryRead).
	err = retryRead(ctx, func() error {
		read = hap.InstanceRead{}
		return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Raw("SELECT now()").Scan(&read.TakenAt).Error; err != nil {
				return fmt.Errorf("read database time: %w", err)
			}
			if err := readCounts(tx, &read.Counts); err != nil {
				return err
			}
			// Before the first migrate there are no reservations to absorb: a
			// live report then still reads KEB's table, creating nothing.
			var migrated bool
			if err := tx.Raw("SELECT to_regclass(?) IS NOT NULL", s.table("binding_reservations")).Scan(&migrated).Error; err != nil {
				return fmt.Errorf("look for the reservations table: %w", err)
			}
			if !migrated {
				return nil
			}
			err := tx.Raw(`SELECT r.instance_id FROM ` + s.table("binding_reservations") + ` r
				JOIN instances i ON i.instance_id = r.instance_id AND i.subscription_secret_name = r.binding_name
				ORDER BY r.instance_id COLLATE "C"`).Scan(&read.Absorbed).Error
			if err != nil {
				return fmt.Errorf("find absorbed reservations: %w", err)
			}
			return nil
		}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	})
	if err != nil {
		return hap.InstanceRead{}, s.wrap("read KEB instances", err)
	}
	return read, nil
}

// readCounts runs the aggregate and decodes its rows one at a time: the
// runtime IDs arrive as JSON text, and only their packed form is kept.
func readCounts(tx *gorm.DB, counts *[]hap.InstanceCount) error {
	rows, err := tx.Raw(countInstancesSQL).Rows()
	if err != nil {
		return fmt.Errorf("count active instances: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var r instanceCountRow
		if err := rows.Scan(&r.BindingName, &r.GlobalAccountID, &r.Active, &r.RuntimeIDs); err != nil {
			return fmt.Errorf("count active instances: %w", err)
		}
		ids = ids[:0]
		if err := json.Unmarshal([]byte(r.RuntimeIDs), &ids); err != nil {
			return fmt.Errorf("decode runtime ids of binding %q, global account %q: %w", r.BindingName, r.GlobalAccountID, err)
		}
		*counts = append(*counts, hap.InstanceCount{BindingName: r.BindingName, GlobalAccountID: r.GlobalAccountID, Active: r.Active,
			RuntimeIDs: hap.RuntimeIDsOf(ids...)})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("count active instances: %w", err)
	}
	return nil
}

// ActiveInstancesOn counts the active instances in one binding right now,
// for the re-check just before a release.
func (s *Store) ActiveInstancesOn(ctx context.Context, binding string) (int, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&Instance{}).
		Where("subscription_secret_name = ?", binding).
		Where(activeInstance).
		Count(&n).Error
	return int(n), s.wrap(fmt.Sprintf("count active instances on binding %q", binding), err)
}

// ReservationsOn counts the reservations provisioning holds on one binding:
// a binding with one is about to receive a cluster, whatever the instance
// table says yet, so it must not be released either.
func (s *Store) ReservationsOn(ctx context.Context, binding string) (int, error) {
	var n int64
	err := s.db.WithContext(ctx).Table(s.table("binding_reservations")).
		Where("binding_name = ?", binding).
		Count(&n).Error
	return int(n), s.wrap(fmt.Sprintf("count reservations on binding %q", binding), err)
}

// HasKEBIndex says whether KEB's instances table carries the index the read
// path counts through (provisioning.KEBIndexName), which KEB adds with its
// own migrations before it reads the candidate table: without it every pick
// scans KEB's table.
func (s *Store) HasKEBIndex(ctx context.Context) (bool, error) {
	var n int
	err := s.db.WithContext(ctx).Raw(`SELECT count(*) FROM pg_indexes WHERE tablename = 'instances' AND indexname = ?
		AND schemaname = current_schema()`, provisioning.KEBIndexName).Scan(&n).Error
	return n > 0, s.wrap("look for KEB's index "+provisioning.KEBIndexName, err)
}
