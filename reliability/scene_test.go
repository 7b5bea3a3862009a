package reliability

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/app"
	"github.com/kyma-project/hap-reconciler/config"
	"github.com/kyma-project/hap-reconciler/hap"
	"github.com/kyma-project/hap-reconciler/jobs"
	"github.com/kyma-project/hap-reconciler/testbed"
	"github.com/kyma-project/hap-reconciler/testbed/landscape"
)

func testContext(t *testing.T) context.Context {
	testbed.Require(t)
	return testbed.Context(t, 10*time.Minute)
}

// scene is one loaded landscape in a world of its own, with the job's
// configuration for it.
type scene struct {
	world      *testbed.World
	cfg        config.Config
	configPath string
	// databaseURL is what the CLI is given with --database-url; empty
	// leaves it to the environment. It starts as the superuser's.
	databaseURL string
	db          *sql.DB
	gardener    dynamic.Interface
}

// newScene creates a world, loads l into it and parses cfgYAML over the
// defaults.
func newScene(t *testing.T, l *landscape.Landscape, cfgYAML string) *scene {
	t.Helper()
	ctx := testContext(t)
	w, err := landscape.LoadWorld(ctx, bed, "rel", l)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	if err := config.Parse([]byte(cfgYAML), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Namespace = w.Namespace
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cfgYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", w.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	dyn, err := dynamic.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	return &scene{world: w, cfg: cfg, configPath: path, databaseURL: w.DatabaseURL, db: db, gardener: dyn}
}

// open wires the job in-process against the scene, as the CLI does.
func (s *scene) open(t *testing.T, now func() time.Time) *app.Env {
	t.Helper()
	env, err := app.Open(testContext(t), app.Settings{
		Config:      s.cfg,
		RESTConfig:  bed.Kube.Config(),
		DatabaseURL: s.world.DatabaseURL,
		Getenv:      func(string) string { return "" },
		Log:         zaptest.NewLogger(t, zaptest.Level(zapcore.ErrorLevel)),
		Now:         now,
	}, app.Needs{Gardener: true, Database: true, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	return env
}

// runAll runs every job once in-process.
func runAll(ctx context.Context, env *app.Env) error {
	return env.Runner.Run(ctx, jobs.Options{Jobs: jobs.AllJobs})
}

// command prepares the built binary against the scene; extra flags follow
// the subcommand's.
func (s *scene) command(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer) {
	all := append(slices.Clone(args), "--config", s.configPath, "--namespace", s.world.Namespace,
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
	rows, err := s.db.QueryContext(testContext(t), `SELECT c.binding_name, c.global_account_id, c.selectable, c.rank,
		c.effective_count, coalesce(m.computed_at, '0001-01-01') FROM hap.binding_candidates c
		LEFT JOIN hap.candidates_computed m ON true ORDER BY c.binding_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []candidateRow
	for rows.Next() {
		var r candidateRow
		if err := rows.Scan(&r.Binding, &r.GA, &r.Selectable, &r.Rank, &r.Effective, &r.ComputedAt); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// bindingLabels reads every binding's labels straight from the API server.
func (s *scene) bindingLabels(t *testing.T) map[string]map[string]string {
	t.Helper()
	list, err := s.gardener.Resource(testbed.CredentialsBindingsResource).Namespace(s.world.Namespace).
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

// releaseOutcomes counts the release audit rows by binding and outcome.
func (s *scene) releaseOutcomes(t *testing.T) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	rows, err := s.db.QueryContext(testContext(t), `SELECT binding_name, outcome FROM hap.binding_releases`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, outcome string
		if err := rows.Scan(&name, &outcome); err != nil {
			t.Fatal(err)
		}
		if out[name] == nil {
			out[name] = map[string]int{}
		}
		out[name][outcome]++
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
