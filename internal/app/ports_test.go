package app

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
)

// A job declares its ports in its own file and takes them from the adapters
// when a run builds it; no list of every job's needs is kept by hand. This
// test is what catches an adapter that lacks a method a job declares: it
// builds every job of the Registry on the adapters the wiring hands the
// runner.
func TestTheAdaptersServeEveryJobsPorts(t *testing.T) {
	ports := jobs.Ports{Gardener: (*apiGardener)(nil), Store: (*db.Store)(nil), Metrics: (*metrics.Metrics)(nil)}
	if err := jobs.CheckPorts(ports); err != nil {
		t.Fatal(err)
	}
}
