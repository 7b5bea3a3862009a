package jobs_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/test/jobstest"
)

// The retention step ends every run whichever jobs it ran, with
// retention.* and the shadow job's window: a chart with shadow off still
// bounds the candidate history the candidates job writes, and the pool
// history the metrics job writes is bounded with metrics off. A dry run that
// writes nothing prunes nothing. The step runs at most once a minute.
func TestEveryRunPrunesWhicheverJobsItRan(t *testing.T) {
	cfg := config.Default()
	if err := config.Parse([]byte("retention:\n  resolvedFindings: 48h\n  poolHistory: 720h\nshadow:\n  window: 24h\n  maxAge: 10m\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	store := jobstest.NewStore()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	runner := jobs.NewRunner(cfg.Jobs, jobs.Ports{Namespace: "garden-fake", Gardener: jobstest.NewGardener(), Store: store, Metrics: metrics.New(),
		Log: zaptest.NewLogger(t), Now: func() time.Time { return now }}, nil)
	for _, only := range [][]string{{jobs.JobDrift}, {jobs.JobCandidates}, {jobs.JobMetrics}} {
		if err := runner.Run(context.Background(), jobs.Options{Jobs: only}); err != nil {
			t.Fatalf("run %v: %v", only, err)
		}
		now = now.Add(time.Minute)
	}
	// serve's reruns of candidates on every change of the bindings: the
	// step runs at most once a minute.
	for range 5 {
		if err := runner.Run(context.Background(), jobs.Options{Jobs: []string{jobs.JobCandidates}}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	want := hap.Retention{ResolvedFindings: 48 * time.Hour, ReleaseAudit: 90 * 24 * time.Hour, ShadowHistory: 24*time.Hour + 10*time.Minute,
		PoolHistory: 720 * time.Hour}
	if len(store.Pruned) != 4 || store.Pruned[0] != want || store.Pruned[3] != want {
		t.Errorf("the runs pruned with %+v; want four runs (three a minute apart, one of five a second apart) each keeping %+v", store.Pruned, want)
	}
	now = now.Add(time.Minute)
	if err := runner.Run(context.Background(), jobs.Options{Jobs: []string{jobs.JobDrift}, DryRun: jobs.DryRunAll}); err != nil {
		t.Fatal(err)
	}
	if len(store.Pruned) != 4 {
		t.Errorf("a dry run pruned: %+v", store.Pruned)
	}
}
