package db

import (
	"context"
	_ "embed"
	"fmt"

	"gorm.io/gorm"
)

// RetireCandidate withdraws a binding about to be released from the picks
// provisioning makes, unless something uses it: it returns the active
// instances plus reservations on the binding, and only when that is zero
// marks its candidate row not selectable and withdraws the binding from
// every pick, as KEB's free step does (provisioning.WithdrawBinding).
//
// The candidate row is locked first (FOR UPDATE), the way a pick locks it, so
// a pick either committed before and its reservation is counted here, or it
// waits and then finds the row no longer selectable. A binding without a
// candidate row cannot be picked at all; the counts still decide.
func (s *Store) RetireCandidate(ctx context.Context, binding string) (inUse int, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(s.sql(candidateLock), params{"binding": binding}).Error; err != nil {
			return fmt.Errorf("lock candidate row: %w", err)
		}
		if inUse, err = s.inUse(tx, binding); err != nil || inUse > 0 {
			return err
		}
		return tx.Exec(s.sql(candidateRetire), params{"binding": binding, "reason": releasedReason}).Error
	})
	return inUse, s.wrap(fmt.Sprintf("retire candidate %q", binding), err)
}

var (
	//go:embed sql/candidate_lock.sql
	candidateLock string
	//go:embed sql/binding_in_use.sql
	bindingInUse string
	//go:embed sql/candidate_retire.sql
	candidateRetire string
)

// releasedReason is the reason the release records for its withdrawal.
const releasedReason = "hap-reconciler's release is marking it dirty"

// InUse counts the active instances and reservations on a binding, changing
// nothing: what a dry run checks instead of retiring.
func (s *Store) InUse(ctx context.Context, binding string) (int, error) {
	n, err := s.inUse(s.db.WithContext(ctx), binding)
	return n, s.wrap(fmt.Sprintf("count use of binding %q", binding), err)
}

func (s *Store) inUse(tx *gorm.DB, binding string) (int, error) {
	var n int
	err := tx.Raw(s.sql(bindingInUse, kebsRules...), params{"binding": binding}).Scan(&n).Error
	return n, err
}
