package db

import (
	"context"
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
		if err := tx.Exec("SELECT 1 FROM "+s.table("binding_candidates")+" WHERE binding_name = ? FOR UPDATE", binding).Error; err != nil {
			return fmt.Errorf("lock candidate row: %w", err)
		}
		if inUse, err = s.inUse(tx, binding); err != nil || inUse > 0 {
			return err
		}
		if err := tx.Exec("UPDATE "+s.table("binding_candidates")+" SET selectable = false WHERE binding_name = ?", binding).Error; err != nil {
			return err
		}
		// The withdrawal outlives a candidates rewrite decided on a snapshot
		// taken before the release marks the binding dirty.
		return tx.Exec("INSERT INTO "+s.table("withdrawn_bindings")+" (binding_name, withdrawn_at, reason) VALUES (?, now(), ?)"+
			" ON CONFLICT (binding_name) DO UPDATE SET withdrawn_at = now(), reason = excluded.reason", binding, releasedReason).Error
	})
	return inUse, s.wrap(fmt.Sprintf("retire candidate %q", binding), err)
}

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
	err := tx.Raw(`SELECT (SELECT count(*) FROM instances WHERE subscription_secret_name = ? AND `+activeInstance+`)
	     + (SELECT count(*) FROM `+s.table("binding_reservations")+` WHERE binding_name = ?)`, binding, binding).Scan(&n).Error
	return n, err
}
