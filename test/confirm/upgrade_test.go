package confirm

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// The job is upgraded, rolled back and upgraded again while KEB's workers
// provision through both pins of the module: the pin of the release before
// (the module as of the previous schema, built from oldModuleCommit) and
// this tree's. The job's schema goes from the previous version to this
// tree's newest with `hap-reconciler migrate`, back with `migrate --down`,
// and forward again, as the chart's hook and a rollback run it, while the
// workers pick without pause. Every answer is a binding, ClaimNew, a retry
// of KEB's step (ErrClaimPending) or a live-path hand-off (LivePath), never
// an error KEB fails the provisioning on; no binding holds more active
// instances than KEB's limit, by KEB's own count; and the picks that ran
// during a migration, the longest of them and each migration's time are
// logged as JSON (docs/deployment.md#upgrade-and-rollback-while-keb-provisions
// has seven runs' figures). No figure is asserted: the machine decides them.
func TestPicksThroughAnUpgradeAndRollbackOfTheJob(t *testing.T) {
	root := repoRoot(t)
	newest, err := db.LatestVersion()
	if err != nil {
		t.Fatal(err)
	}
	previous := int(newest) - 1
	if at := newestMigrationAt(t, root, oldModuleCommit); at != previous {
		t.Fatalf("oldModuleCommit %.12s was built with schema %d; the upgrade goes from %d to %d: set it to the last commit whose newest migration is %d",
			oldModuleCommit, at, previous, newest, previous)
	}

	// The binaries first: a cold build takes minutes, which the scene's
	// context does not allow for.
	ctx := testbed.Context(t, 10*time.Minute)
	oldBin := oldModuleBinary(t, ctx, root)
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

	u := &upgrade{s: s, ctx: ctx, job: job, steps: map[string]*sync.RWMutex{}}
	for _, ga := range upgradeGAs {
		u.steps[ga] = &sync.RWMutex{}
	}
	// The schema as the release before left it: its newest migration. The
	// same migrations without a pick beside them first, for comparison.
	u.migrate(t, "roll back, no picks", "--down", "1")
	u.migrate(t, "upgrade, no picks")
	u.migrate(t, "roll back, no picks", "--down", "1")
	u.setupMigrations = len(u.migrations)

	// KEB's replicas: two on the old pin for ga-1, two on this tree's for
	// ga-2. Each pin serves a GA of its own so that an over-filled binding
	// is the module's doing: a GA served at once by the table and by KEB's
	// live path, which counts no reservation, is test/differential's.
	for range 2 {
		u.workers = append(u.workers, &upgradeWorker{name: "old", ga: "ga-1", module: s.startOldModule(t, oldBin)})
	}
	for range 2 {
		u.workers = append(u.workers, &upgradeWorker{name: "new", ga: "ga-2", module: u.newModule(t)})
	}

	steps := []struct {
		what string
		args []string
	}{
		{"upgrade (the pre-upgrade hook)", nil},
		{"roll back (migrate --down before helm rollback)", []string{"--down", "1"}},
		{"upgrade again", nil},
	}
	u.start()
	t.Cleanup(u.stopWorkers) // before the old module's processes end
	for _, step := range steps {
		u.provisionedInPhase(t)
		u.migrate(t, step.what, step.args...)
		u.phase.Add(1)
		if step.args == nil {
			// The upgraded release's job starts and rewrites the table
			// while KEB picks.
			u.runJob(t)
		}
	}
	u.provisionedInPhase(t)
	u.stop(t)

	u.report(t)
	for _, ga := range upgradeGAs {
		for binding, n := range s.countsOf(ga) {
			if n > kebLimit {
				t.Errorf("%s holds %d of %s's active instances, above KEB's limit %d", binding, n, ga, kebLimit)
			}
		}
	}
	if v := u.schemaVersion(t); v != int(newest) {
		t.Errorf("the schema ends at version %d, want %d", v, newest)
	}
}

// The GAs the two pins provision for, and the free bindings they claim
// from. A GA holds at most eight active instances at a time (two of its
// own, and per worker workerClusters and the one being placed): three
// bindings at KEB's limit of 3, so each GA claims at most two, needless
// claims aside; twelve leave room for those.
var upgradeGAs = []string{"ga-1", "ga-2"}

const (
	upgradeFreeBindings = 12
	// provisioningsPerPhase is how many provisionings each worker completes
	// at each schema version before the next migration.
	provisioningsPerPhase = 5
)

// moduleCalls are the module's calls in KEB's resolve step, whichever pin.
type moduleCalls interface {
	pick(ctx context.Context, req provisioning.Request) answer
	record(ctx context.Context, req provisioning.Request, binding string) error
	abandon(ctx context.Context, req provisioning.Request) error
}

// answer is what KEB's step reads of NextBinding's answer.
type answer struct {
	binding  string
	claimNew bool
	// err is the error's message; livePath, pending and guarded what KEB
	// makes of it.
	err              string
	livePath         bool
	pending, guarded bool
	retryAfter       time.Duration
	// failed is the test's own failure to ask (the old module's process).
	failed string
}

// kind names the answer for the figures.
func (a answer) kind() string {
	switch {
	case a.failed != "":
		return "not asked"
	case a.guarded:
		return "guarded"
	case a.pending:
		return "claim pending"
	case a.livePath:
		return "live path"
	case a.err != "":
		return "error"
	case a.claimNew:
		return "claimNew"
	}
	return "binding"
}

// newModule is this tree's module on a replica's own pool, as KEB's
// adapter configures it at the adoption guide's third tier.
type newModule struct{ c *provisioning.Client }

func (u *upgrade) newModule(t *testing.T) newModule {
	t.Helper()
	pool, err := sql.Open("postgres", u.s.sc.World.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	c := &provisioning.Client{DB: pool, Gardener: u.s.keb.Gardener(), HoldClaims: true}
	t.Cleanup(func() { _ = c.Close(); _ = pool.Close() })
	return newModule{c}
}

func (m newModule) pick(ctx context.Context, req provisioning.Request) answer {
	pick, err := m.c.NextBinding(ctx, req)
	a := answer{binding: pick.Binding, claimNew: pick.ClaimNew}
	if err != nil {
		var pending *provisioning.ClaimPendingError
		a.err, a.livePath, a.guarded = err.Error(), provisioning.LivePath(err), errors.Is(err, provisioning.ErrGuarded)
		if errors.As(err, &pending) {
			a.pending, a.retryAfter = true, pending.RetryAfter
		}
	}
	return a
}

func (m newModule) record(ctx context.Context, req provisioning.Request, binding string) error {
	limit := kebLimit
	return m.c.RecordClaim(ctx, provisioning.Claim{Request: req, BindingName: binding, Limit: &limit})
}

func (m newModule) abandon(ctx context.Context, req provisioning.Request) error {
	return m.c.AbandonClaim(ctx, req)
}

// upgrade is the run: the scene, the job's binary, KEB's workers, the
// phase (how many migrations have ended) and what every call took.
type upgrade struct {
	s       *scene
	ctx     context.Context
	job     string
	workers []*upgradeWorker
	phase   atomic.Int32

	// steps are each GA's steps: the table's shared, KEB's live path's
	// exclusive (provision).
	steps map[string]*sync.RWMutex

	mu         sync.Mutex
	picks      []pickTaken
	migrations []migrationTaken
	// setupMigrations ran before any worker started.
	setupMigrations int
	jobFailures     []string
	progress        chan int // a worker's index, after each provisioning
	done            chan struct{}
	stopOnce        sync.Once
	wg              sync.WaitGroup
	instances       atomic.Int64
	failures        []error
}

type upgradeWorker struct {
	name   string // the pin: old or new
	ga     string
	module moduleCalls
	// replica is the replica's step mutex, held around KEB's claim.
	replica sync.Mutex
	// inPhase counts the provisionings completed in each phase; the driver
	// reads it.
	inPhase map[int32]int
	// active are the worker's clusters not yet deprovisioned, oldest first.
	active []string
}

type pickTaken struct {
	module     string
	start, end time.Time
	kind, err  string
}

type migrationTaken struct {
	What       string `json:"what"`
	start, end time.Time
	Millis     float64 `json:"ms"`
}

// migrate runs `hap-reconciler migrate` with args on the scene, as the
// chart's hook does, and records its time, process start to exit.
func (u *upgrade) migrate(t *testing.T, what string, args ...string) {
	t.Helper()
	start := time.Now()
	if err := u.cli(append([]string{"migrate"}, args...)...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	end := time.Now()
	u.mu.Lock()
	u.migrations = append(u.migrations, migrationTaken{What: what, start: start, end: end, Millis: ms(end.Sub(start))})
	u.mu.Unlock()
}

// runJob is one candidates run of this tree's job in a process of its own,
// as the upgraded release's pod starts. A run that fails is run again, as
// the job's next scheduled run would be, up to jobAttempts; each failure is
// among the figures (a rewrite and KEB's picks may deadlock, and
// PostgreSQL then ends one of them).
func (u *upgrade) runJob(t *testing.T) {
	t.Helper()
	for range jobAttempts {
		err := u.cli("run", "--jobs", jobs.JobCandidates)
		if err == nil {
			return
		}
		failure := err.Error()
		if strings.Contains(failure, "deadlock detected") {
			failure += "\nPostgreSQL's account: " + u.lastDeadlock()
		}
		u.mu.Lock()
		u.jobFailures = append(u.jobFailures, failure)
		u.mu.Unlock()
	}
	t.Fatalf("the upgraded job's candidates run failed %d times in a row: %v", jobAttempts, u.jobFailures)
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

// start sets every worker provisioning, one provisioning after another,
// until stop.
func (u *upgrade) start() {
	u.progress, u.done = make(chan int, 64), make(chan struct{})
	for i, w := range u.workers {
		w.inPhase = map[int32]int{}
		u.wg.Go(func() {
			for {
				select {
				case <-u.done:
					return
				default:
				}
				phase := u.phase.Load()
				err := u.provision(w)
				u.mu.Lock()
				if err != nil {
					u.failures = append(u.failures, fmt.Errorf("%s module, %s: %w", w.name, w.ga, err))
				}
				w.inPhase[phase]++
				u.mu.Unlock()
				// The driver looks again after each receive: a full
				// buffer holds wake-ups enough, and a worker never waits
				// for the driver, which is busy migrating.
				select {
				case u.progress <- i:
				default:
				}
			}
		})
	}
}

// provisionedInPhase returns once every worker has completed
// provisioningsPerPhase provisionings that began in the current phase.
func (u *upgrade) provisionedInPhase(t *testing.T) {
	t.Helper()
	phase := u.phase.Load()
	for {
		u.mu.Lock()
		ready := !slices.ContainsFunc(u.workers, func(w *upgradeWorker) bool { return w.inPhase[phase] < provisioningsPerPhase })
		failures := errors.Join(u.failures...)
		u.mu.Unlock()
		if failures != nil {
			u.stop(t)
		}
		if ready {
			return
		}
		select {
		case <-u.progress:
		case <-u.ctx.Done():
			u.stopWorkers()
			t.Fatalf("phase %d: %v before every worker provisioned %d times", phase, u.ctx.Err(), provisioningsPerPhase)
		}
	}
}

// stop ends the workers and fails the test with their errors.
func (u *upgrade) stop(t *testing.T) {
	t.Helper()
	u.stopWorkers()
	if err := errors.Join(u.failures...); err != nil {
		t.Fatalf("phase %d: %v", u.phase.Load(), err)
	}
}

func (u *upgrade) stopWorkers() {
	u.stopOnce.Do(func() { close(u.done) })
	u.wg.Wait()
}

// provision is one provisioning through KEB's resolve step switched to the
// table: KEB's instance row, the pick, and on its answer KEB's next move
// (the adoption guide): place on the binding; on ClaimNew claim under the
// replica's mutex and RecordClaim; on ErrClaimPending the step again after
// the interval it names; on a live-path answer KEB's live path. Then KEB
// writes the binding into the instance, and KEB's count of the binding's
// active instances must be within its limit.
//
// KEB's live path counts written instances only, not the table's
// reservations of steps still in flight, and its own steps decide outside
// their mutex: a live-path step beside other steps of the GA may over-fill
// a binding by KEB's own doing (docs/read-path.md). So that an over-filled
// binding here is the module's, a live-path step of a GA runs alone (the
// GA's steps lock, exclusively) and the table's steps of the GA run
// together (shared).
func (u *upgrade) provision(w *upgradeWorker) error {
	id := fmt.Sprintf("up-%d", u.instances.Add(1))
	if _, err := u.s.db.ExecContext(u.ctx, `INSERT INTO instances (instance_id, runtime_id, global_account_id,
		provisioning_parameters, created_at, updated_at) VALUES ($1, $1, $2, '{}', now(), now())`, id, w.ga); err != nil {
		return err
	}
	steps := u.steps[w.ga]
	steps.RLock()
	binding, live, err := u.resolve(w, u.s.request(id, w.ga, awsPool))
	if live {
		steps.RUnlock()
		steps.Lock()
		defer steps.Unlock()
		binding, err = u.live(w)
	} else {
		defer steps.RUnlock()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	if err := u.s.place(id, binding); err != nil {
		return err
	}
	counts, err := u.s.keb.CountPerBinding(u.ctx, w.ga, []string{binding})
	if err != nil {
		return err
	}
	if n := counts[binding]; n > kebLimit {
		return fmt.Errorf("%s placed on %s, which then held %d of %s's active instances, above KEB's limit %d", id, binding, n, w.ga, kebLimit)
	}
	// KEB deprovisions too: each worker keeps its two newest clusters, so
	// the GA's bindings fill and free as the run goes on, and the pool is
	// never exhausted however many picks the machine makes.
	w.active = append(w.active, id)
	if len(w.active) <= workerClusters {
		return nil
	}
	freed := w.active[0]
	w.active = w.active[1:]
	_, err = u.s.db.ExecContext(u.ctx, `UPDATE instances SET deleted_at = now() WHERE instance_id = $1`, freed)
	return err
}

// recordFailed is a RecordClaim that failed, among the picks' answers.
const recordFailed = "record failed"

// workerClusters is how many of its clusters a worker keeps active.
const workerClusters = 2

// resolve is the step on the table's side: the binding, or live when the
// answer hands the step to KEB's live path.
func (u *upgrade) resolve(w *upgradeWorker, req provisioning.Request) (binding string, live bool, err error) {
	var waited time.Duration
	for {
		start := time.Now()
		a := w.module.pick(u.ctx, req)
		u.mu.Lock()
		u.picks = append(u.picks, pickTaken{module: w.name, start: start, end: time.Now(), kind: a.kind(), err: a.err})
		u.mu.Unlock()
		switch {
		case a.failed != "":
			return "", false, errors.New(a.failed)
		case a.pending && waited+a.retryAfter <= kebrules.ResolveStepTimeout:
			waited += a.retryAfter
			if err := kebrules.Requeue(u.ctx, a.retryAfter); err != nil {
				return "", false, err
			}
			continue
		case a.livePath:
			return "", true, nil
		case a.err != "":
			return "", false, fmt.Errorf("an answer KEB fails the provisioning on: %s", a.err)
		case !a.claimNew:
			return a.binding, false, nil
		}
		w.replica.Lock()
		name, err := u.s.keb.Claim(u.ctx, w.ga, awsPool)
		w.replica.Unlock()
		if err != nil {
			return "", false, errors.Join(fmt.Errorf("claim: %w", err), w.module.abandon(u.ctx, req))
		}
		// A RecordClaim that fails leaves the table without the claim:
		// the next pick may say ClaimNew again, a needless claim, never an
		// over-filled binding. KEB provisions on the claimed binding.
		if err := w.module.record(u.ctx, req, name); err != nil {
			u.mu.Lock()
			u.picks = append(u.picks, pickTaken{module: w.name, start: time.Now(), end: time.Now(), kind: recordFailed, err: err.Error()})
			u.mu.Unlock()
		}
		return name, false, nil
	}
}

// live is KEB's live path for the worker's GA: list and count, claim when
// the GA is full.
func (u *upgrade) live(w *upgradeWorker) (string, error) {
	v, err := u.s.keb.Dedicated(u.ctx, w.ga, awsPool)
	switch {
	case err != nil:
		return "", err
	case v.Decision.Guarded:
		return "", errors.New("KEB's live path guarded the provisioning")
	case !v.Decision.ClaimNew:
		return v.Decision.Binding, nil
	}
	return u.s.keb.Claim(u.ctx, w.ga, awsPool)
}

// upgradeFigures is the run's record: per pin and period of the run (at a
// schema version, or during a migration) how the picks answered, and the
// errors among the answers, instances left out, with their counts; the
// picks that overlapped each migration and the longest of them; the longest
// pick outside every migration; each migration's time.
type upgradeFigures struct {
	Answers    map[string]map[string]map[string]int `json:"answers"`
	Errors     map[string]map[string]map[string]int `json:"errors"`
	Migrations []migrationFigure                    `json:"migrations"`
	// LongestPickOutsideMs is the longest pick that overlapped no
	// migration, for comparison.
	LongestPickOutsideMs float64 `json:"longestPickOutsideMigrationsMs"`
	Picks                int     `json:"picks"`
	// JobRunsFailed are the upgraded job's runs that failed and were run
	// again.
	JobRunsFailed []string `json:"jobRunsFailed"`
}

type migrationFigure struct {
	migrationTaken
	// PicksDuring overlapped the migration's process; LongestPickMs is the
	// longest of them, start to answer.
	PicksDuring   int     `json:"picksDuring"`
	LongestPickMs float64 `json:"longestPickDuringMs"`
}

// instanceNamed is where an error names the instance it was asked for.
var instanceNamed = regexp.MustCompile(`instance "[^"]*"`)

// period names the part of the run p fell in: during a migration it
// overlapped, else after the last migration that had ended when it
// started; numbered in the run's order.
func (u *upgrade) period(p pickTaken) string {
	ended := 0
	for k := 1; u.setupMigrations+k-1 < len(u.migrations); k++ {
		m := u.migrations[u.setupMigrations+k-1]
		if p.start.Before(m.end) && p.end.After(m.start) {
			return fmt.Sprintf("%d during %s", 2*k-1, m.What)
		}
		if !m.end.After(p.start) {
			ended = k
		}
	}
	if ended == 0 {
		return "0 on the previous release's schema"
	}
	return fmt.Sprintf("%d after %s", 2*ended, u.migrations[u.setupMigrations+ended-1].What)
}

func (u *upgrade) report(t *testing.T) {
	t.Helper()
	f := upgradeFigures{Answers: map[string]map[string]map[string]int{}, Errors: map[string]map[string]map[string]int{},
		Picks: len(u.picks), JobRunsFailed: u.jobFailures}
	for _, m := range u.migrations {
		f.Migrations = append(f.Migrations, migrationFigure{migrationTaken: m})
	}
	count := func(into map[string]map[string]map[string]int, module, period, what string) {
		if into[module] == nil {
			into[module] = map[string]map[string]int{}
		}
		if into[module][period] == nil {
			into[module][period] = map[string]int{}
		}
		into[module][period][what]++
	}
	for _, p := range u.picks {
		period := u.period(p)
		count(f.Answers, p.module, period, p.kind)
		if p.err != "" {
			count(f.Errors, p.module, period, instanceNamed.ReplaceAllString(p.err, "instance …"))
		}
		if p.kind == recordFailed {
			continue
		}
		during := false
		for i := range f.Migrations {
			m := &f.Migrations[i]
			if p.start.Before(m.end) && p.end.After(m.start) {
				during = true
				m.PicksDuring++
				m.LongestPickMs = max(m.LongestPickMs, ms(p.end.Sub(p.start)))
			}
		}
		if !during {
			f.LongestPickOutsideMs = max(f.LongestPickOutsideMs, ms(p.end.Sub(p.start)))
		}
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("upgrade and rollback while KEB provisions:\n%s", out)
	for module, periods := range f.Answers {
		for period, kinds := range periods {
			for kind, n := range kinds {
				if kind != "binding" && kind != "claimNew" && kind != "claim pending" && kind != "live path" && kind != recordFailed {
					t.Errorf("%s module, %s: %d answers %q, which KEB fails the provisioning on", module, period, n, kind)
				}
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
