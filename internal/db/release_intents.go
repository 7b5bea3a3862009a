package db

import (
	"context"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// OpenReleaseIntents returns, per binding, the newest release intent that
// no later audit row of the binding settles: a run that meant to release
// the binding ended before it recorded what came of it. Older intents of
// the same binding are settled along with the newest.
func (s *Store) OpenReleaseIntents(ctx context.Context) ([]hap.ReleaseRecord, error) {
	releases := s.table("binding_releases")
	var rows []releaseRow
	err := s.db.WithContext(ctx).Raw(`SELECT DISTINCT ON (i.binding_name) i.* FROM `+releases+` i
		WHERE i.outcome = ? AND NOT EXISTS (
			SELECT 1 FROM `+releases+` o WHERE o.binding_name = i.binding_name AND o.id > i.id AND o.outcome <> ?)
		ORDER BY i.binding_name, i.id DESC`, hap.OutcomeIntent, hap.OutcomeIntent).Scan(&rows).Error
	if err != nil {
		return nil, s.wrap("read open release intents", err)
	}
	out := make([]hap.ReleaseRecord, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.record())
	}
	return out, nil
}
