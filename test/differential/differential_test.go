package differential

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // KEB's driver
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

// cronShare is the part of the picks made while the job runs CronJob-style;
// the rest are made while serve runs it.
const cronShare = 0.7

// The stream's KEB configuration: most GAs on the allowlist, a small limit
// so bindings fill quickly, and a guard of two.
const (
	kebLimit = 3
	kebGuard = 2
	// kebProvider is the provider type of every runtime of the stream.
	kebProvider = "aws"
)

// jobConfig is the job's configuration, the same multi-account block as
// KEB's. Release is off: only KEB frees bindings here.
const jobConfig = `
hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: [ga-1, ga-2, ga-3, ga-4, ga-5, ga-6, ga-7]
    minBindingsForGuard: 2
    limits: {default: 3}
release: {enabled: false}
`

// After every pick of a seeded stream of KEB's actions, the candidate
// table's answer is compared with KEB's rules on the live state at that
// moment. No pick over-fills an account, claims needlessly (KEB's workers
// asking at once included), claims a shared binding or hands a GA another
// GA's binding; every other difference is of a declared kind.
func TestPicksAgreeWithKEBAtTheMomentItAsks(t *testing.T) {
	testbed.Require(t)
	seed := chooseSeed()
	t.Logf("seed %d (replay with -differential.seed=%d -differential.picks=%d)", seed, seed, *picksFlag)
	ctx := testbed.Context(t, 20*time.Minute+time.Duration(*picksFlag)*300*time.Millisecond)
	started := time.Now()
	s, env := newStream(t, ctx, seed, jobConfig)
	s.tally.lap("setup", started)

	lap := time.Now()
	s.phase, s.runJob = "cronjob", s.cronJob(env)
	s.run(t, ctx, int(float64(*picksFlag)*cronShare))
	s.tally.lap("cronjob", lap)

	lap = time.Now()
	s.phase, s.runJob = "serve", nil
	stop := s.serve(t, ctx)
	s.run(t, ctx, *picksFlag)
	stop()
	s.tally.lap("serve", lap)

	s.tally.Seconds = seconds(time.Since(started))
	s.report(t)
}

func chooseSeed() uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	return uint64(time.Now().UnixNano()%1_000_000) + 1
}

// run steps until the stream has made picks picks in all.
func (s *stream) run(t *testing.T, ctx context.Context, picks int) {
	t.Helper()
	for s.tally.Picks < picks {
		s.tally.Steps++
		if err := s.step(ctx); err != nil {
			s.dumpLog(t)
			t.Fatalf("seed %d, action %d: %v", s.tally.Seed, len(s.log), err)
		}
	}
}

// newStream loads the stream's world: free bindings in two dedicated
// pools, a shared pool, ga-2's two internal bindings with its two
// clusters; the job's schema migrated with configYAML, the table never
// computed.
func newStream(t *testing.T, ctx context.Context, seed uint64, configYAML string) (*stream, *app.Env) {
	t.Helper()
	l := landscape.New(seed)
	for range 40 {
		l.AddBinding(landscape.BindingSpec{Pool: awsPool})
	}
	for range 16 {
		l.AddBinding(landscape.BindingSpec{Pool: awsEUPool})
	}
	for range 3 {
		l.AddBinding(landscape.BindingSpec{Pool: sharedPool, Shared: true})
	}
	var internal []string
	for range 2 {
		internal = append(internal, l.AddBinding(landscape.BindingSpec{Pool: awsPool,
			GlobalAccountID: "ga-2", Internal: true}).Name)
	}
	sc := testscene.Load(t, ctx, bed, "diff", l, configYAML)
	env := sc.Open(t, ctx, testscene.Wiring{Log: zaptest.NewLogger(t, zaptest.Level(zapcore.ErrorLevel))})
	// KEB's driver, lib/pq: the Client prepares its statements on it.
	db, err := sql.Open("postgres", sc.World.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(20)
	t.Cleanup(func() { _ = db.Close() })

	cfg := kebrules.Config{Allowed: globalAccounts[:7], Limits: map[string]int{"default": kebLimit}, MinBindingsForGuard: kebGuard}
	quiet := rest.CopyConfig(sc.Bed.Kube.Config())
	quiet.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(quiet)
	if err != nil {
		t.Fatal(err)
	}
	// KEB's two replicas, each with its own pool of connections.
	replicas := []*replica{{client: &provisioning.Client{DB: db, Gardener: (&kebrules.KEB{Bindings: sc.Bindings}).Gardener(), HoldClaims: true}}}
	second, err := sql.Open("postgres", sc.World.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	second.SetMaxOpenConns(20)
	t.Cleanup(func() { _ = second.Close() })
	replicas = append(replicas, &replica{client: &provisioning.Client{DB: second, Gardener: (&kebrules.KEB{Bindings: sc.Bindings}).Gardener(), HoldClaims: true}})
	w := &world{sc: sc, db: db, dbs: []*sql.DB{db, second}, quietShoots: dyn.Resource(testbed.ShootsResource).Namespace(sc.World.Namespace), keb: &kebrules.KEB{Bindings: sc.Bindings, Shoots: sc.Shoots, DB: db, Config: cfg},
		client: replicas[0].client, replicas: replicas, sketches: landscape.New(seed), profiles: map[string]bool{}, shootsOn: map[string]int{}}
	w.keb.Changed = w.changed
	s := &stream{world: w, rng: rand.New(rand.NewPCG(seed, 0x5eed)), tally: newTally(seed)}
	w.loseWithdrawal = func() bool {
		lost := s.rng.IntN(4) == 0
		if lost {
			s.tally.WithdrawalsLost++
		}
		return lost
	}
	for range 2 {
		c, err := w.request(ctx, "ga-2", awsPool, false)
		if err == nil {
			err = w.place(ctx, c, internal[0])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return s, env
}

// cronJob runs the candidates job once per call, as the chart's CronJob
// does: mostly in-process, wired as the CLI wires it, one call in three as
// the built binary.
func (s *stream) cronJob(env *app.Env) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if s.rng.IntN(3) == 0 {
			s.tally.JobRuns["binary"]++
			s.note("job run: binary")
			return s.runBinary(ctx)
		}
		s.tally.JobRuns["in-process"]++
		s.note("job run: in-process")
		return env.Runner.Run(ctx, jobs.Options{Jobs: []string{jobs.JobCandidates}})
	}
}

func (s *stream) runBinary(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, binary, append([]string{"run", "--jobs", jobs.JobCandidates, "--log-level", "error"}, s.sc.Flags()...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hap-reconciler run: %v\n%s", err, out.String())
	}
	return nil
}

// serve runs the job as serve in-process: the candidates job after each
// burst of Gardener changes, whenever its watch sees one, unsynchronised
// with the stream as in production. stop ends it and counts its runs.
func (s *stream) serve(t *testing.T, ctx context.Context) (stop func()) {
	t.Helper()
	sv, err := app.OpenServer(ctx, app.Inputs{
		Config: s.sc.Config, RESTConfig: s.sc.Bed.Kube.Config(), DatabaseURL: s.sc.World.DatabaseURL,
		Getenv: func(string) string { return "" }, Log: zaptest.NewLogger(t, zaptest.Level(zapcore.ErrorLevel)), Now: time.Now,
	}, jobs.NoDryRun)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sv.Serve(serveCtx, ln) }()
	s.note("serve started")
	before := s.computedAt(t, ctx)
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		sv.Close()
		s.tally.JobRuns["serve (table rewrites seen)"] = s.rewritesSince(t, ctx, before)
	}
}

// computedAt is when the table's snapshot was taken.
func (s *stream) computedAt(t *testing.T, ctx context.Context) time.Time {
	t.Helper()
	var at sql.NullTime
	if err := s.db.QueryRowContext(ctx, `SELECT max(computed_at) FROM hap.candidates_computed`).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at.Time
}

// rewritesSince counts the rewrites of the candidate table committed
// after the snapshot at.
func (s *stream) rewritesSince(t *testing.T, ctx context.Context, at time.Time) int {
	t.Helper()
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM hap.candidate_rewrites WHERE snapshot_at > $1`, at).Scan(&n); err != nil {
		t.Logf("counting serve's rewrites: %v", err)
	}
	return n
}

// tally is what the stream found; it is reported as JSON.
type tally struct {
	Seed            uint64         `json:"seed"`
	Picks           int            `json:"picks"`
	Agreements      int            `json:"agreements"`
	Differences     map[string]int `json:"differencesByReason"`
	Undeclared      map[string]int `json:"undeclaredDifferences"`
	OverFilled      int            `json:"overFilledAccounts"`
	NeedlessClaims  int            `json:"needlessClaims"`
	NeedlessByCause map[string]int `json:"needlessClaimsByCause"`
	SharedClaimed   int            `json:"sharedBindingsClaimed"`
	CrossTenant     int            `json:"crossTenantPicks"`
	DirtyUsed       int            `json:"dirtyOrWithdrawnBindingsUsed"`
	// Bursts are KEB's workers resolving for one GA at once.
	Bursts          burstTally     `json:"workersAtOnce"`
	PicksByPhase    map[string]int `json:"picksByPhase"`
	LivePlacements  int            `json:"livePlacements"`
	WithdrawalsLost int            `json:"withdrawalsLost"`
	OperatorLabels  int            `json:"bindingsRetiredByOperators"`
	SharedAdded     int            `json:"sharedBindingsAdded"`
	ClaimsFailed    int            `json:"claimsFailedPoolEmpty"`
	JobRuns         map[string]int `json:"jobRuns"`
	Steps           int            `json:"steps"`
	// SecondsByAction is where the run's time went, for sizing runs.
	SecondsByAction map[string]float64 `json:"secondsByAction"`
	SecondsByPhase  map[string]float64 `json:"secondsByPhase"`
	Seconds         float64            `json:"seconds"`
	failures        []string
}

func newTally(seed uint64) *tally {
	return &tally{Seed: seed, Differences: map[string]int{}, Undeclared: map[string]int{}, PicksByPhase: map[string]int{},
		JobRuns: map[string]int{}, NeedlessByCause: map[string]int{}, SecondsByAction: map[string]float64{}, SecondsByPhase: map[string]float64{}}
}

func (t *tally) lap(phase string, since time.Time) {
	t.SecondsByPhase[phase] = seconds(time.Since(since))
}

func seconds(d time.Duration) float64 { return d.Round(100 * time.Millisecond).Seconds() }

// maxFailuresShown bounds the failing picks described in full.
const maxFailuresShown = 20

// add counts one pick's outcome; detail describes it, and is only built
// for a pick that fails the test.
func (t *tally) add(phase, outcome string, detail func() string) {
	t.Picks++
	t.PicksByPhase[phase]++
	failing := true
	switch outcome {
	case outcomeAgree:
		t.Agreements++
		failing = false
	case outcomeOverFilled:
		t.OverFilled++
	case outcomeNeedlessClaim + ": " + causeUnknown, outcomeNeedlessClaim + ": " + causeUnexplained:
		t.NeedlessClaims++
		t.NeedlessByCause[strings.TrimPrefix(outcome, outcomeNeedlessClaim+": ")]++
	case outcomeSharedClaimed:
		t.SharedClaimed++
	case outcomeCrossTenant:
		t.CrossTenant++
	case outcomeDirtyUsed:
		t.DirtyUsed++
	default:
		if _, ok := declaredDifferences[outcome]; ok {
			t.Differences[outcome]++
			failing = false
		} else {
			t.Undeclared[outcome]++
		}
	}
	if failing && len(t.failures) < maxFailuresShown {
		t.failures = append(t.failures, outcome+": "+detail())
	}
}

// report logs the figures and fails on any of the four counters or an
// undeclared difference, naming the seed and the action log.
func (s *stream) report(t *testing.T) {
	t.Helper()
	s.tally.Bursts.summarize()
	out, err := json.MarshalIndent(s.tally, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("differential summary:\n%s", out)
	t.Logf("declared differences:\n%s", declaredText())
	tl := s.tally
	if tl.OverFilled+tl.NeedlessClaims+tl.SharedClaimed+tl.CrossTenant+tl.DirtyUsed+len(tl.Undeclared) == 0 {
		return
	}
	path := s.dumpLog(t)
	t.Errorf("seed %d: %d over-filled, %d needless claims, %d shared claimed, %d cross-tenant, %d dirty or withdrawn used, undeclared %v; actions in %s; replay with -differential.seed=%d -differential.picks=%d\n%s",
		tl.Seed, tl.OverFilled, tl.NeedlessClaims, tl.SharedClaimed, tl.CrossTenant, tl.DirtyUsed, tl.Undeclared, path, tl.Seed, *picksFlag,
		strings.Join(tl.failures, "\n"))
}

func declaredText() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(declaredDifferences)) {
		fmt.Fprintf(&b, "  %s: %s\n", k, declaredDifferences[k])
	}
	return b.String()
}

// dumpLog writes the stream's actions where they outlive the test.
func (s *stream) dumpLog(t *testing.T) string {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("hap-differential-seed-%d.log", s.tally.Seed))
	if err := os.WriteFile(path, []byte(strings.Join(s.log, "\n")+"\n"), 0o644); err != nil {
		t.Logf("writing the action log: %v", err)
	}
	return path
}
