package reliability

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

func testContext(t *testing.T) context.Context {
	return testbed.Context(t, 10*time.Minute)
}

// scene is one loaded landscape in a world of its own, with the job's
// configuration for it.
type scene struct {
	*testscene.Scene
	// databaseURL is what the CLI is given with --database-url; empty
	// leaves it to the environment. It starts as the superuser's.
	databaseURL string
	// db is the superuser's connection pool to the world's database: KEB's
	// side, and faults injected into the job's tables.
	db       *sql.DB
	gardener dynamic.Interface
}

// newScene creates a world, loads l into it and parses cfgYAML over the
// defaults.
func newScene(t *testing.T, l *landscape.Landscape, cfgYAML string) *scene {
	t.Helper()
	sc := testscene.Load(t, testContext(t), bed, "rel", l, cfgYAML)
	db, err := sql.Open("pgx", sc.World.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	dyn, err := dynamic.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	return &scene{Scene: sc, databaseURL: sc.World.DatabaseURL, db: db, gardener: dyn}
}

// open wires the job in-process against the scene, as the CLI does.
func (s *scene) open(t *testing.T, now func() time.Time) *app.Env {
	t.Helper()
	return s.Open(t, testContext(t), testscene.Wiring{Now: now, Log: zaptest.NewLogger(t, zaptest.Level(zapcore.ErrorLevel))})
}

// runAll runs every job once in-process.
func runAll(ctx context.Context, env *app.Env) error {
	return env.Runner.Run(ctx, jobs.Options{Jobs: jobs.AllJobs})
}

// command prepares the built binary against the scene; extra flags follow
// the subcommand's.
func (s *scene) command(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer) {
	all := append(slices.Clone(args), "--config", s.ConfigPath, "--namespace", s.World.Namespace,
		"--kubeconfig", bed.Kube.KubeconfigPath())
	if s.databaseURL != "" {
		all = append(all, "--database-url", s.databaseURL)
	}
	cmd := exec.CommandContext(ctx, binary, all...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	return cmd, &out
}

// mustRunEach runs the built binary once for each command, with env added
// to its environment, and fails the test at the first that does not exit 0;
// as names how it ran, for the failure.
func (s *scene) mustRunEach(t *testing.T, env []string, as string, commands ...[]string) {
	t.Helper()
	for _, args := range commands {
		cmd, out := s.command(testContext(t), args...)
		cmd.Env = append(cmd.Env, env...)
		if code := exitCode(t, cmd); code != 0 {
			t.Fatalf("%v %s: exit %d\n%s", args, as, code, out)
		}
	}
}

// checkWholeRun checks what a run with releaseEverythingEmpty on l left:
// the candidate table as KEB's rules say, and the empty binding released.
func (s *scene) checkWholeRun(t *testing.T, l *landscape.Landscape) {
	t.Helper()
	checkCandidates(t, s.candidates(t), wantCandidates(l, s.Config.Policy()), s.released(t)...)
	if labels := s.bindingLabels(t)["control-empty"]; labels[hap.LabelDirty] != "true" {
		t.Errorf("the empty binding was not released: %v", labels)
	}
}

// exitCode runs the prepared command to its end.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return cmd.ProcessState.ExitCode()
}

// candidateRow is a row of the candidate table with what tells one
// rewrite from another: ComputedAt is when the whole table was last
// computed (a rewrite writes only the rows that change).
type candidateRow struct {
	Binding    string
	GA         string
	Selectable bool
	Rank       int
	Effective  int
	ComputedAt time.Time
}

func (s *scene) candidates(t *testing.T) []candidateRow {
	t.Helper()
	stored, err := s.Store(t, testContext(t)).Candidates(testContext(t), hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]candidateRow, 0, len(stored))
	for _, c := range stored {
		out = append(out, candidateRow{Binding: c.BindingName, GA: c.GlobalAccountID, Selectable: c.Selectable,
			Rank: c.Rank, Effective: c.EffectiveCount, ComputedAt: c.ComputedAt})
	}
	slices.SortStableFunc(out, func(a, b candidateRow) int { return strings.Compare(a.Binding, b.Binding) })
	return out
}

// bindingLabels reads every binding's labels straight from the API server.
func (s *scene) bindingLabels(t *testing.T) map[string]map[string]string {
	t.Helper()
	list, err := s.gardener.Resource(testbed.CredentialsBindingsResource).Namespace(s.World.Namespace).
		List(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]map[string]string, len(list.Items))
	for _, b := range list.Items {
		out[b.GetName()] = b.GetLabels()
	}
	return out
}

// releaseHistory is the release history, oldest first, read as the job
// reads it.
func (s *scene) releaseHistory(t *testing.T) []hap.ReleaseRecord {
	t.Helper()
	history, err := s.Store(t, testContext(t)).ReleaseHistory(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	return history
}

// releaseOutcomes counts the release audit rows by binding and outcome.
func (s *scene) releaseOutcomes(t *testing.T) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	for _, r := range s.releaseHistory(t) {
		if out[r.BindingName] == nil {
			out[r.BindingName] = map[string]int{}
		}
		out[r.BindingName][r.Outcome]++
	}
	return out
}

func (s *scene) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := s.db.ExecContext(testContext(t), query, args...); err != nil {
		t.Fatal(err)
	}
}

// quietLog is for code paths whose log the test does not read.
var quietLog = zap.NewNop()

// released names the bindings the audit says were released.
func (s *scene) released(t *testing.T) []string {
	t.Helper()
	var out []string
	for name, outcomes := range s.releaseOutcomes(t) {
		if outcomes[hap.OutcomeReleased] > 0 {
			out = append(out, name)
		}
	}
	return out
}
