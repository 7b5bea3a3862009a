package db

import (
	"context"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// OpenReleaseIntents returns every release intent no outcome row settles:
// a run that meant to release the binding ended, or could not tell, before
// it recorded what came of it. An outcome row settles the intent it names
// (intent_id). An intent written before outcome rows named theirs (its
// resource_version is NULL) is settled, as then, by any later outcome row
// of its binding, and only the newest such intent of a binding is open.
func (s *Store) OpenReleaseIntents(ctx context.Context) ([]hap.OpenIntent, error) {
	releases := s.table("binding_releases")
	var rows []releaseRow
	err := s.db.WithContext(ctx).Raw(`SELECT i.*, extract(epoch FROM clock_timestamp() - i.created_at)::float8 AS age_seconds
		FROM `+releases+` i
		WHERE i.outcome = ?
		  AND NOT EXISTS (SELECT 1 FROM `+releases+` o WHERE o.intent_id = i.id)
		  AND (i.resource_version IS NOT NULL OR NOT EXISTS (
			SELECT 1 FROM `+releases+` o WHERE o.binding_name = i.binding_name AND o.id > i.id
			  AND (o.outcome <> ? OR o.resource_version IS NULL)))
		ORDER BY i.id`, hap.OutcomeIntent, hap.OutcomeIntent).Scan(&rows).Error
	if err != nil {
		return nil, s.wrap("read open release intents", err)
	}
	out := make([]hap.OpenIntent, 0, len(rows))
	for _, r := range rows {
		out = append(out, hap.OpenIntent{ReleaseRecord: r.record(), Age: time.Duration(r.AgeSeconds * float64(time.Second))})
	}
	return out, nil
}
