package db

import (
	_ "embed"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

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

// unsettledClaims returns, by binding, the claims KEB recorded that the
// snapshot taken at snapshotAt may not show (made less than claimSettle
// before it): their rows stay as RecordClaim wrote them. It reads and locks
// nothing; endSettledClaims ends the others once the rewrite has changed
// its rows (ReplaceCandidates says why).
func (s *Store) unsettledClaims(tx *gorm.DB, snapshotAt time.Time) (map[string]recordedClaim, error) {
	var rows []struct {
		BindingName     string
		GlobalAccountID string
		HyperscalerType string
		EUAccess        bool
	}
	if err := tx.Raw(s.sql(recordedClaimsUnsettled), params{"settled": snapshotAt.Add(-claimSettle)}).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("read recorded claims: %w", err)
	}
	claims := make(map[string]recordedClaim, len(rows))
	for _, r := range rows {
		claims[r.BindingName] = recordedClaim{GlobalAccountID: r.GlobalAccountID, Pool: hap.Pool{HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess}}
	}
	return claims, nil
}

// endSettledClaims ends the records of the claims the snapshot taken at
// snapshotAt shows (made claimSettle or more before it). A claim recorded
// again since unsettledClaims read the table carries its new time and
// stays: the statement decides on each row's newest version.
func (s *Store) endSettledClaims(tx *gorm.DB, snapshotAt time.Time) error {
	if err := tx.Exec(s.sql(recordedClaimsEndSettled), params{"settled": snapshotAt.Add(-claimSettle)}).Error; err != nil {
		return fmt.Errorf("end recorded claims the snapshot shows: %w", err)
	}
	return nil
}

var (
	//go:embed sql/recorded_claims_end_settled.sql
	recordedClaimsEndSettled string
	//go:embed sql/recorded_claims_unsettled.sql
	recordedClaimsUnsettled string
)
