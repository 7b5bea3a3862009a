package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

// bed is the package's test bed; every test works in a World of its own.
var bed *testbed.Bed

// binary is hap-reconciler built from this tree, for the tests that run it
// as an operator does: a process of its own, at a terminal where that
// matters.
var binary string

func TestMain(m *testing.M) { testbed.Main(m, testbed.Setup{Bed: &bed, Binary: &binary}) }

func testContext(t *testing.T) context.Context {
	return testbed.Context(t, 5*time.Minute)
}

// scene is a loaded landscape and the flags that point the CLI at it.
type scene struct{ *testscene.Scene }

// load creates a world, loads l into it and writes cfg as the config file.
func load(t *testing.T, l *landscape.Landscape, cfg string) *scene {
	t.Helper()
	return &scene{testscene.Load(t, testContext(t), bed, "cli", l, cfg)}
}

// cli runs hap-reconciler in-process against the scene. It returns what
// the command printed on stdout and its log stream: stdout again for a
// command that logs there (run, serve, migrate, check: logs is then the
// whole of stdout), stderr for report and pools (see logStream).
func (s *scene) cli(t *testing.T, args ...string) (code int, stdout, logs string) {
	t.Helper()
	return execCLI(t, append(args, s.Flags()...)...)
}

// mustRun runs the CLI and fails the test unless it exits 0.
func (s *scene) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, logs := s.cli(t, args...)
	if code != 0 {
		t.Fatalf("hap-reconciler %v: exit %d\n%s", args, code, logs)
	}
	return out
}

// db is the scene's one connection to its database.
func (s *scene) db(t *testing.T) *pgx.Conn { return s.Conn(t, testContext(t)) }
