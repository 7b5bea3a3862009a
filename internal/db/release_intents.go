package db

import (
	"context"
	_ "embed"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

//go:embed sql/release_intents_open.sql
var releaseIntentsOpen string

// OpenReleaseIntents returns every release intent no outcome row settles:
// a run that meant to release the binding ended, or could not tell, before
// it recorded what came of it. An outcome row settles the intent it names
// (intent_id). An intent written before outcome rows named theirs (its
// resource_version is NULL) is settled, as then, by any later outcome row
// of its binding, and only the newest such intent of a binding is open.
func (s *Store) OpenReleaseIntents(ctx context.Context) ([]hap.OpenIntent, error) {
	var rows []releaseRow
	err := s.db.WithContext(ctx).Raw(s.sql(releaseIntentsOpen), params{"intent": hap.OutcomeIntent}).Scan(&rows).Error
	if err != nil {
		return nil, s.wrap("read open release intents", err)
	}
	out := make([]hap.OpenIntent, 0, len(rows))
	for _, r := range rows {
		out = append(out, hap.OpenIntent{ReleaseRecord: r.record(), Age: time.Duration(r.AgeSeconds * float64(time.Second))})
	}
	return out, nil
}
