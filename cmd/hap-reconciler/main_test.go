package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kyma-project/hap-reconciler/testbed"
	"github.com/kyma-project/hap-reconciler/testbed/landscape"
)

// bed is the package's test bed; every test works in a World of its own.
var bed *testbed.Bed

func TestMain(m *testing.M) { os.Exit(testbed.RunWithBed(m, &bed)) }

func testContext(t *testing.T) context.Context {
	testbed.Require(t)
	return testbed.Context(t, 5*time.Minute)
}

// scene is a loaded landscape and the flags that point the CLI at it.
type scene struct {
	world  *testbed.World
	config string
	// conn is the test's one connection to the world's database; tests
	// that poll must not open one per look.
	conn *pgx.Conn
}

// load creates a world, loads l into it and writes cfg as the config file.
func load(t *testing.T, l *landscape.Landscape, cfg string) *scene {
	t.Helper()
	ctx := testContext(t)
	w, err := landscape.LoadWorld(ctx, bed, "cli", l)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return &scene{world: w, config: path}
}

// cli runs hap-reconciler in-process against the scene.
func (s *scene) cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	all := append(args, s.flags()...)
	code = execute(testContext(t), all, &out, &errOut, func(string) string { return "" })
	return code, out.String(), errOut.String()
}

// mustRun runs the CLI and fails the test unless it exits 0.
func (s *scene) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := s.cli(t, args...)
	if code != 0 {
		t.Fatalf("hap-reconciler %v: exit %d\n%s", args, code, errOut)
	}
	return out
}

// db is the scene's connection to its database, opened on first use; it
// serves one goroutine at a time.
func (s *scene) db(t *testing.T) *pgx.Conn {
	t.Helper()
	if s.conn != nil && !s.conn.IsClosed() {
		return s.conn
	}
	conn, err := pgx.Connect(context.Background(), s.world.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	s.conn = conn
	return conn
}

// flags point the CLI at the scene.
func (s *scene) flags() []string {
	return []string{"--config", s.config, "--namespace", s.world.Namespace,
		"--kubeconfig", bed.Kube.KubeconfigPath(), "--database-url", s.world.DatabaseURL}
}
