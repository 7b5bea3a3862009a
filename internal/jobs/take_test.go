package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/test/jobstest"
)

// gatherOnly serves what every run reads of the database and nothing a job
// keeps: the store of a job whose port the adapter was never given.
type gatherOnly struct {
	jobs.Store
	reads int
}

func (g *gatherOnly) ReadInstanceCounts(ctx context.Context) (hap.InstanceRead, error) {
	g.reads++
	return g.Store.ReadInstanceCounts(ctx)
}

func TestAJobWhosePortTheStoreLacksFailsTheRunBeforeItReadsAnything(t *testing.T) {
	cfg := config.Default()
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	store := &gatherOnly{Store: jobstest.NewStore()}
	m := metrics.New()
	runner := jobs.NewRunner(cfg.Jobs, jobs.Ports{Namespace: "garden-fake", Gardener: jobstest.NewGardener(), Store: store, Metrics: m,
		Log: zaptest.NewLogger(t), Now: time.Now}, nil)

	err := runner.Run(context.Background(), jobs.Options{Jobs: []string{jobs.JobDrift}})
	if err == nil {
		t.Fatal("drift ran on a store that lacks its port")
	}
	for _, want := range []string{"job drift", "does not serve the port jobs.driftStore", "lacks RecordFindings", "lacks OpenFindings"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if store.reads != 0 {
		t.Errorf("the run read KEB's instances %d times before it knew a job could not run", store.reads)
	}
	if err := jobs.CheckPorts(jobs.Ports{Gardener: jobstest.NewGardener(), Store: store, Metrics: m}); err == nil ||
		!strings.Contains(err.Error(), "job candidates") || strings.Contains(err.Error(), "job metrics: the metrics") {
		t.Errorf("CheckPorts: %v; want every job that keeps a table named, and no metrics port missing", err)
	}
}
