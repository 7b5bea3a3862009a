package db

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"fmt"

	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

var (
	//go:embed sql/transaction_now.sql
	transactionNow string
	//go:embed sql/instances_count.sql
	instancesCount string
	//go:embed sql/table_exists.sql
	tableExists string
	//go:embed sql/reservations_absorbed.sql
	reservationsAbsorbed string
	//go:embed sql/instances_active_on.sql
	instancesActiveOn string
	//go:embed sql/reservations_on.sql
	reservationsOn string
	//go:embed sql/keb_index_exists.sql
	kebIndexExists string
)

// kebsRules fills a statement's placeholders for KEB's rules, which the
// provisioning module writes once for the job and KEB alike: {{active}},
// an instance KEB counts as live (deleted_at still the zero time), and
// {{owner}}, the GA whose count KEB puts it in.
var kebsRules = []string{"{{active}}", schema.ActiveInstance, "{{owner}}", schema.Owner("instances")}

// instanceCountRow is one row of instances_count.sql.
type instanceCountRow struct {
	BindingName     string `gorm:"column:binding_name"`
	GlobalAccountID string `gorm:"column:global_account_id"`
	Active          int    `gorm:"column:active"`
	RuntimeIDs      string `gorm:"column:runtime_ids"`
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
			if err := tx.Raw(s.sql(transactionNow)).Scan(&read.TakenAt).Error; err != nil {
				return fmt.Errorf("read database time: %w", err)
			}
			if err := s.readCounts(tx, &read.Counts); err != nil {
				return err
			}
			// Before the first migrate there are no reservations to absorb: a
			// live report then still reads KEB's table, creating nothing.
			var migrated bool
			if err := tx.Raw(s.sql(tableExists), params{"table": s.table("binding_reservations")}).Scan(&migrated).Error; err != nil {
				return fmt.Errorf("look for the reservations table: %w", err)
			}
			if !migrated {
				return nil
			}
			if err := tx.Raw(s.sql(reservationsAbsorbed)).Scan(&read.Absorbed).Error; err != nil {
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
func (s *Store) readCounts(tx *gorm.DB, counts *[]hap.InstanceCount) error {
	var ids []string
	err := streamRows(tx, s.sql(instancesCount, kebsRules...), nil, func(r instanceCountRow) error {
		ids = ids[:0]
		if err := json.Unmarshal([]byte(r.RuntimeIDs), &ids); err != nil {
			return fmt.Errorf("decode runtime ids of binding %q, global account %q: %w", r.BindingName, r.GlobalAccountID, err)
		}
		*counts = append(*counts, hap.InstanceCount{BindingName: r.BindingName, GlobalAccountID: r.GlobalAccountID, Active: r.Active,
			RuntimeIDs: hap.RuntimeIDsOf(ids...)})
		return nil
	})
	if err != nil {
		return fmt.Errorf("count active instances: %w", err)
	}
	return nil
}

// ActiveInstancesOn counts the active instances in one binding right now,
// for the re-check just before a release.
func (s *Store) ActiveInstancesOn(ctx context.Context, binding string) (int, error) {
	var n int
	err := s.db.WithContext(ctx).Raw(s.sql(instancesActiveOn, kebsRules...), params{"binding": binding}).Scan(&n).Error
	return n, s.wrap(fmt.Sprintf("count active instances on binding %q", binding), err)
}

// ReservationsOn counts the reservations provisioning holds on one binding:
// a binding with one is about to receive a cluster, whatever the instance
// table says yet, so it must not be released either.
func (s *Store) ReservationsOn(ctx context.Context, binding string) (int, error) {
	var n int
	err := s.db.WithContext(ctx).Raw(s.sql(reservationsOn), params{"binding": binding}).Scan(&n).Error
	return n, s.wrap(fmt.Sprintf("count reservations on binding %q", binding), err)
}

// HasKEBIndex says whether KEB's instances table carries the index the read
// path counts through (schema.KEBIndexName), valid, which KEB adds
// with its own migrations before it reads the candidate table: an index left
// INVALID by a concurrent build that failed, or one still being built,
// counts as missing, as the read path counts it (provisioning.ErrNoKEBIndex).
func (s *Store) HasKEBIndex(ctx context.Context) (bool, error) {
	var exists bool
	err := s.db.WithContext(ctx).Raw(s.sql(kebIndexExists), params{"index": schema.KEBIndexName}).Scan(&exists).Error
	return exists, s.wrap("look for KEB's index "+schema.KEBIndexName, err)
}
