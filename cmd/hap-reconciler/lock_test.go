package main

import (
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestTwoRunsAtOnceOnlyOneDoesTheWork(t *testing.T) {
	l := smallLandscape()
	planted(l)
	s := load(t, l, plantedConfig)

	// The first run stops between deciding and acting, holding the lock.
	var firstLog testbed.SyncBuffer
	first := s.open(t, &firstLog)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	first.Runner.BeforeAct = func(string) {
		once.Do(func() {
			close(entered)
			<-release
		})
	}
	done := make(chan error, 1)
	go func() { done <- first.Runner.Run(testContext(t), jobs.Options{Jobs: jobs.AllJobs}) }()
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
			if err := <-done; err != nil {
				t.Logf("after the test: %v", err)
			}
		}
	})
	select {
	case <-entered:
	case <-testContext(t).Done():
		t.Fatalf("the first run never got to act:\n%s", firstLog.String())
	}

	// The second exits at once, successfully, saying why, and writes nothing.
	code, _, stderr := s.cli(t, "run")
	if code != exitOK {
		t.Fatalf("second run: exit %d, want 0\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "another run holds this landscape's lock") {
		t.Errorf("second run does not say why it did nothing:\n%s", stderr)
	}
	for _, table := range []string{"binding_drift", "binding_candidates", "binding_empty_since", "binding_releases"} {
		if n := s.rows(t, "hap."+table); n != 0 {
			t.Errorf("hap.%s has %d rows while the only working run has not acted yet", table, n)
		}
	}

	// The first finishes and has done the work.
	close(release)
	released = true
	if err := <-done; err != nil {
		t.Fatalf("first run: %v\n%s", err, firstLog.String())
	}
	truth := hap.NewTally(l.Snapshot())
	p := policy(t, plantedConfig)
	if got, want := s.candidateRows(t), normalize(hap.DecideCandidates(truth, p)); !reflect.DeepEqual(got, want) {
		t.Errorf("candidate table of the first run:\n got %v\nwant %v", got, want)
	}
	want := map[findingKey]bool{}
	for _, f := range hap.DecideDrift(truth, p, hap.DecideCandidates(truth, p)) {
		want[findingKey{f.BindingName, string(f.Kind), f.GlobalAccountID}] = true
	}
	if got := s.openFindings(t); len(want) == 0 || !reflect.DeepEqual(keys(got), keys(want)) {
		t.Errorf("findings of the first run:\n got %v\nwant %v", keys(got), keys(want))
	}
}

// open wires the job as the CLI does, for tests that need what the CLI does
// not offer, such as Runner.BeforeAct.
func (s *scene) open(t *testing.T, log io.Writer) *environment {
	t.Helper()
	env, err := s.globals(log).open(testContext(t), openForRun)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	return env
}

// openToServe opens the job as serve does, Gardener watched, listening on
// a free port.
func (s *scene) openToServe(t *testing.T, log io.Writer, dry dryRunFlags) (*app.Server, net.Listener) {
	t.Helper()
	g := s.globals(log)
	g.overrides.listen = "127.0.0.1:0"
	srv, err := g.openServer(testContext(t), dry)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ln, err := listenOn(srv)
	if err != nil {
		t.Fatal(err)
	}
	return srv, ln
}

func (s *scene) globals(log io.Writer) *globals {
	return &globals{
		configFile: s.ConfigPath, overrides: overrides{namespace: s.World.Namespace}, kubeconfig: bed.Kube.KubeconfigPath(),
		databaseURL: s.World.DatabaseURL, logLevel: "info",
		getenv: func(string) string { return "" }, stdout: io.Discard, stderr: io.Discard, logs: log,
	}
}

func (s *scene) rows(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := s.db(t).QueryRow(testContext(t), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
