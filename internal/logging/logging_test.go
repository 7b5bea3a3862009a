package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/zap"
)

// A duration is written as KEB's slog JSON handler writes one: integer
// nanoseconds, so a query over KEB's logs reads the job's the same way.
func TestDurationsAreWrittenAsSlogWritesThem(t *testing.T) {
	const took = 1500 * time.Millisecond
	var job, keb bytes.Buffer
	New(&job, zap.InfoLevel).Info("job done", zap.Duration("took", took))
	slog.New(slog.NewJSONHandler(&keb, nil)).Info("step done", "took", took)
	var jobLine, kebLine map[string]any
	if err := json.Unmarshal(job.Bytes(), &jobLine); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(keb.Bytes(), &kebLine); err != nil {
		t.Fatal(err)
	}
	if jobLine["took"] != kebLine["took"] {
		t.Errorf("took: the job writes %v, KEB's slog %v", jobLine["took"], kebLine["took"])
	}
}
