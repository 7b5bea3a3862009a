package app

import (
	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/gardener/exportfile"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
)

// Every adapter the wiring hands the runner serves the jobs' ports whole:
// each job declares its narrow ports beside its work, jobs.Store,
// jobs.Metrics and jobs.Gardener embed them, and the compiler holds every
// adapter to them here (as Kubernetes' cronjob controller holds its real
// and fake job controls, pkg/controller/cronjob/injection.go). A method a
// job declares and an adapter lacks fails the build, naming the adapter,
// the port and the method.
var (
	_ jobs.Store    = (*db.Store)(nil)
	_ jobs.Store    = rewriteNotingStore{}
	_ jobs.Metrics  = (*metrics.Metrics)(nil)
	_ jobs.Gardener = (*gardener.Client)(nil)
	_ jobs.Gardener = (*gardener.Watcher)(nil)
	_ jobs.Gardener = (*exportfile.Source)(nil)
	_ jobs.Gardener = (*apiGardener)(nil)
	_ jobs.Locker   = runLocker{}
)
