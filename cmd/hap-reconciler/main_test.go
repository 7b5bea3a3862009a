package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

// bed is the package's test bed; every test works in a World of its own.
var bed *testbed.Bed

func TestMain(m *testing.M) { os.Exit(testbed.RunWithBed(m, &bed)) }

func testContext(t *testing.T) context.Context {
	testbed.Require(t)
	return testbed.Context(t, 5*time.Minute)
}

// scene is a loaded landscape and the flags that point the CLI at it.
type scene struct{ *testscene.Scene }

// load creates a world, loads l into it and writes cfg as the config file.
func load(t *testing.T, l *landscape.Landscape, cfg string) *scene {
	t.Helper()
	return &scene{testscene.Load(t, testContext(t), bed, "cli", l, cfg)}
}

// cli runs hap-reconciler in-process against the scene.
func (s *scene) cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	all := append(args, s.Flags()...)
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

// db is the scene's one connection to its database.
func (s *scene) db(t *testing.T) *pgx.Conn { return s.Conn(t, testContext(t)) }
