package confirm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebworkers"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// The job is upgraded, rolled back and upgraded again while KEB's workers
// provision through both pins of the module (test/kebworkers): the pin of
// the release before and this tree's. The job's schema goes from the
// previous version to this tree's newest with `hap-reconciler migrate`,
// back with `migrate --down`, and forward again, as the chart's hook and a
// rollback run it, while the workers pick without pause. Every answer is a
// binding, ClaimNew, a retry of KEB's step (ErrClaimPending) or a
// live-path hand-off (LivePath), never an error KEB fails the provisioning
// on; no binding holds more active instances than KEB's limit, by KEB's own
// count; and the picks that ran during a migration, the longest of them and
// each migration's time are logged as JSON
// (docs/deployment.md#upgrade-and-rollback-while-keb-provisions has the
// figures). No figure is asserted: the machine decides them. The same run
// with the chart on a real kubelet is make e2e-upgrade's.
func TestPicksThroughAnUpgradeAndRollbackOfTheJob(t *testing.T) {
	root := kebworkers.RepoRoot(t)
	newest, err := db.LatestVersion()
	if err != nil {
		t.Fatal(err)
	}
	kebworkers.CheckOldModuleCommit(t, root, int(newest))

	// The binaries first: a cold build takes minutes, which the scene's
	// context does not allow for.
	ctx := testbed.Context(t, 10*time.Minute)
	oldBin := kebworkers.OldModuleBinary(t, ctx, root)
	job, err := testbed.BuildBinary(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	l := landscape.New(50)
	for _, ga := range upgradeGAs {
		l.AddBinding(landscape.BindingSpec{Name: "aws-" + ga, Pool: awsPool, GlobalAccountID: ga})
	}
	for range upgradeFreeBindings {
		l.AddBinding(landscape.BindingSpec{Pool: awsPool})
	}
	s := newScene(t, l)
	for _, ga := range upgradeGAs {
		for range kebLimit - 1 {
			s.placed(ga, "aws-"+ga)
		}
	}
	s.computeTable()

	u := &upgrade{s: s, ctx: ctx, job: job}
	land := kebworkers.Landscape{DB: s.db, DatabaseURL: s.sc.World.DatabaseURL, KEB: s.keb,
		Gardener: s.sc.Bed.Kube.Config(), Namespace: s.sc.World.Namespace, Pool: awsPool, Limit: kebLimit,
		Request: func(instance, ga string) provisioning.Request { return s.request(instance, ga, awsPool) }}
	u.run = kebworkers.New(ctx, land)
	// The schema as the release before left it: its newest migration. The
	// same migrations without a pick beside them first, for comparison.
	u.migrate(t, "roll back, no picks", "--down", "1")
	u.migrate(t, "upgrade, no picks")
	u.migrate(t, "roll back, no picks", "--down", "1")

	// KEB's replicas: two on the old pin for ga-1, two on this tree's for
	// ga-2 (each GA on one pin: kebworkers.Worker).
	var workers []*kebworkers.Worker
	for range 2 {
		workers = append(workers, &kebworkers.Worker{Pin: "old", GA: "ga-1", Module: kebworkers.StartOldModule(t, oldBin, land)})
	}
	for range 2 {
		workers = append(workers, &kebworkers.Worker{Pin: "new", GA: "ga-2", Module: kebworkers.NewModule(t, land)})
	}

	steps := []struct {
		what string
		args []string
	}{
		{"upgrade (the pre-upgrade hook)", nil},
		{"roll back (migrate --down before helm rollback)", []string{"--down", "1"}},
		{"upgrade again", nil},
	}
	u.run.Start(t, workers...)
	for _, step := range steps {
		u.run.WaitProvisioned(t, provisioningsPerPhase)
		u.migrate(t, step.what, step.args...)
		if step.args == nil {
			// The upgraded release's job starts and rewrites the table
			// while KEB picks.
			u.runJob(t)
		}
	}
	u.run.WaitProvisioned(t, provisioningsPerPhase)
	u.run.Stop(t)

	u.run.Report(t)
	u.run.CheckLimits(t)
	if v := u.schemaVersion(t); v != int(newest) {
		t.Errorf("the schema ends at version %d, want %d", v, newest)
	}
}

// The GAs the two pins provision for, and the free bindings they claim
// from. A GA holds at most eight active instances at a time (two of its
// own, and per worker its kept clusters and the one being placed): three
// bindings at KEB's limit of 3, so each GA claims at most two, needless
// claims aside; twelve leave room for those.
var upgradeGAs = []string{"ga-1", "ga-2"}

const (
	upgradeFreeBindings = 12
	// provisioningsPerPhase is how many provisionings each worker completes
	// at each schema version before the next migration.
	provisioningsPerPhase = 5
)

// upgrade is the run: the scene, the job's binary and KEB's workers.
type upgrade struct {
	s   *scene
	ctx context.Context
	job string
	run *kebworkers.Run
}

// migrate runs `hap-reconciler migrate` with args on the scene, as the
// chart's hook does, as a step of the run: its time is process start to
// exit.
func (u *upgrade) migrate(t *testing.T, what string, args ...string) {
	t.Helper()
	u.run.Step(t, what, func() error { return u.cli(append([]string{"migrate"}, args...)...) })
}

// runJob is one candidates run of this tree's job in a process of its own,
// as the upgraded release's pod starts. A run that fails is run again, as
// the job's next scheduled run would be, up to jobAttempts; each failure is
// noted in the figures (a rewrite and KEB's picks may deadlock, and
// PostgreSQL then ends one of them).
func (u *upgrade) runJob(t *testing.T) {
	t.Helper()
	var failures []string
	for range jobAttempts {
		err := u.cli("run", "--jobs", jobs.JobCandidates)
		if err == nil {
			return
		}
		failure := "the upgraded job's candidates run failed and was run again: " + err.Error()
		if strings.Contains(failure, "deadlock detected") {
			failure += "\nPostgreSQL's account: " + u.lastDeadlock()
		}
		failures = append(failures, failure)
		u.run.Note(failure)
	}
	t.Fatalf("the upgraded job's candidates run failed %d times in a row: %v", jobAttempts, failures)
}

// lastDeadlock is what the test bed's PostgreSQL logged of the last
// deadlock it ended: which process waited for which, and their statements.
func (u *upgrade) lastDeadlock() string {
	log, err := os.ReadFile(u.s.sc.Bed.Postgres.LogPath())
	if err != nil {
		return err.Error()
	}
	i := bytes.LastIndex(log, []byte("deadlock detected"))
	if i < 0 {
		return "none logged"
	}
	return string(log[i:min(len(log), i+3000)])
}

// jobAttempts bounds the job's runs after an upgrade.
const jobAttempts = 3

func (u *upgrade) cli(args ...string) error {
	out, err := exec.CommandContext(u.ctx, u.job, append(args, u.s.sc.Flags()...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("hap-reconciler %v: %w\n%s", args, err, lastLine(out))
	}
	return nil
}

// lastLine is the last non-empty line of a process's output: the job's
// error line.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func (u *upgrade) schemaVersion(t *testing.T) int {
	t.Helper()
	var v int
	if err := u.s.db.QueryRowContext(u.ctx, `SELECT version FROM hap.hap_reconciler_migrations`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
