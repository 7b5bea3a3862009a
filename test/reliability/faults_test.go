package reliability

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// interruptShoots calls fault once, right after the after-th shoot a list
// handed over: in the middle of a paged list.
type interruptShoots struct {
	jobs.Gardener
	after     int
	fault     func(ctx context.Context) error
	delivered int
	once      sync.Once
}

func (g *interruptShoots) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	return g.Gardener.ListShoots(ctx, onReset, func(s hap.Shoot) error {
		g.delivered++
		if g.delivered == g.after {
			var err error
			g.once.Do(func() { err = g.fault(ctx) })
			if err != nil {
				return err
			}
		}
		return fn(s)
	})
}

// faultLandscape is a small fleet plus one valid, claimed, empty binding
// that a run with releaseEverythingEmpty releases: proof that a run which
// did not release it stopped on purpose.
func faultLandscape(seed uint64) *landscape.Landscape {
	l := landscape.Generate(landscape.Options{Seed: seed, GlobalAccounts: 3})
	l.AddBinding(landscape.BindingSpec{Name: "control-empty", Pool: awsPool, GlobalAccountID: goodGA})
	return l
}

// preparedScene has had one run of drift and candidates, so a candidate
// table exists; then one instance is deleted so the next table differs.
func preparedScene(t *testing.T, seed uint64) (*scene, *landscape.Landscape, []candidateRow) {
	t.Helper()
	l := faultLandscape(seed)
	s := newScene(t, l, releaseEverythingEmpty)
	env := s.open(t, time.Now)
	if err := env.Runner.Run(testContext(t), jobs.Options{Jobs: []string{jobs.JobDrift, jobs.JobCandidates}}); err != nil {
		t.Fatal(err)
	}
	previous := s.candidates(t)
	for _, i := range l.Instances {
		if i.Active() && i.SubscriptionSecretName != "" {
			i.DeletedAt = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
			s.exec(t, `UPDATE instances SET deleted_at = $1 WHERE instance_id = $2`, i.DeletedAt, i.InstanceID)
			break
		}
	}
	return s, l, previous
}

// assertNothingChanged: the table is the previous one, row for row, and no
// binding was released.
func assertNothingChanged(t *testing.T, s *scene, previous []candidateRow) {
	t.Helper()
	if got := s.candidates(t); !reflect.DeepEqual(got, previous) {
		t.Errorf("the candidate table changed in a failed run:\n got %v\nwant %v", got, previous)
	}
	if labels := s.bindingLabels(t)["control-empty"]; labels[hap.LabelDirty] != "" {
		t.Errorf("a run without the whole picture released a binding: %v", labels)
	}
	if audit := s.releaseOutcomes(t); len(audit) != 0 {
		t.Errorf("release audit rows after a failed run: %v", audit)
	}
}

// assertRecovered: the next run succeeds, writes the table the landscape
// calls for and releases the empty binding.
func assertRecovered(t *testing.T, s *scene, l *landscape.Landscape) {
	t.Helper()
	env := s.open(t, time.Now)
	if err := runAll(testContext(t), env); err != nil {
		t.Fatalf("the next run did not recover: %v", err)
	}
	checkCandidates(t, s.candidates(t), wantCandidates(l, s.Config.Policy()), s.released(t)...)
	if labels := s.bindingLabels(t)["control-empty"]; labels[hap.LabelDirty] != "true" {
		t.Errorf("the recovered run did not release the empty binding: %v", labels)
	}
}

func TestRunFailsClosedWhenAnAPIServerStopsMidList(t *testing.T) {
	testbed.Require(t)
	for _, down := range []testbed.APIServer{testbed.KubeAPIServer, testbed.GardenerAPIServer} {
		t.Run(string(down), func(t *testing.T) { testRunFailsClosedWhenAServerStopsMidList(t, down) })
	}
}

// testRunFailsClosedWhenAServerStopsMidList: the run fails as incomplete,
// the CLI exits 1 while the server is away, nothing changed, and the next
// run after the server is back is complete and right.
func testRunFailsClosedWhenAServerStopsMidList(t *testing.T, down testbed.APIServer) {
	s, l, previous := preparedScene(t, 31)
	env := s.open(t, time.Now)
	stopped := false
	env.Runner.Gardener = &interruptShoots{Gardener: env.Runner.Gardener, after: 7, fault: func(context.Context) error {
		stopped = true
		return bed.Kube.StopServer(down)
	}}
	t.Cleanup(func() { _ = bed.Kube.StartServer(context.Background(), down) })

	err := runAll(testContext(t), env)
	if !stopped || err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("stopped=%v, run error %v: want the run to fail as incomplete", stopped, err)
	}

	// The CLI says so with exit status 1 while the server is away.
	cmd, out := s.command(testContext(t), "run")
	if code := exitCode(t, cmd); code != 1 {
		t.Fatalf("run with %s down: exit %d, want 1\n%s", down, code, out)
	}

	if err := bed.Kube.StartServer(testContext(t), down); err != nil {
		t.Fatal(err)
	}
	assertNothingChanged(t, s, previous)
	assertRecovered(t, s, l)
}

func TestRunStartsTheListOverWhenCompactionExpiresItsContinueToken(t *testing.T) {
	testbed.Require(t)
	l := faultLandscape(32)
	s := newScene(t, l, releaseEverythingEmpty)
	core, err := kubernetes.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	env := s.open(t, time.Now)
	interrupted := &interruptShoots{Gardener: env.Runner.Gardener, after: 7, fault: func(ctx context.Context) error {
		// A write moves etcd past the list's revision; compaction drops it.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "revision-bump-"}}
		if _, err := core.CoreV1().ConfigMaps(s.World.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
		return bed.Kube.CompactEtcd(ctx)
	}}
	env.Runner.Gardener = interrupted
	if err := runAll(testContext(t), env); err != nil {
		t.Fatalf("a run whose list token expired: %v", err)
	}
	if interrupted.delivered <= len(l.Shoots) {
		t.Fatalf("%d shoots delivered for %d: the list did not start over", interrupted.delivered, len(l.Shoots))
	}
	checkCandidates(t, s.candidates(t), wantCandidates(l, s.Config.Policy()), s.released(t)...)
	if labels := s.bindingLabels(t)["control-empty"]; labels[hap.LabelDirty] != "true" {
		t.Errorf("the empty binding was not released: %v", labels)
	}
}

// PostgreSQL goes down while a run waits on it: once while gathering, once
// while rewriting the candidate table. The test holds a lock the run's
// statement must wait for, so the crash comes exactly then. A failed run
// changed nothing; a run whose read was repeated after the restart is
// right; the next run is right either way.
func TestPostgresRestartDuringARunKeepsThePreviousTable(t *testing.T) {
	testbed.Require(t)
	for _, c := range []struct {
		name, lock, table string
		// mayRideOut: a read is repeated after a dropped connection, so
		// when the server is back in time the run succeeds instead.
		mayRideOut bool
	}{
		{"while gathering", "LOCK TABLE instances IN ACCESS EXCLUSIVE MODE", "instances", true},
		// The rewrite's last statement, after every row change: the crash
		// comes with the whole change written and not yet committed.
		{"while rewriting the candidate table", "LOCK TABLE hap.candidates_computed IN ACCESS EXCLUSIVE MODE", "candidates_computed", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, l, previous := preparedScene(t, 33)
			env := s.open(t, time.Now)
			blocker, err := s.db.BeginTx(testContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := blocker.Exec(c.lock); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- runAll(testContext(t), env) }()
			waitForBlockedLock(t, s.db, c.table)
			if err := bed.Postgres.Restart(testContext(t)); err != nil {
				t.Fatal(err)
			}
			_ = blocker.Rollback()
			err = <-done
			s.reconnect(t)
			switch {
			case c.mayRideOut && errors.Is(err, db.ErrRunLockLost):
				// The reads were repeated in time, so the table is the
				// whole picture's; but the restart ended the run lock's
				// session, so another run may be alongside: no release.
				checkCandidates(t, s.candidates(t), wantCandidates(l, s.Config.Policy()))
				if labels := s.bindingLabels(t)["control-empty"]; labels[hap.LabelDirty] != "" {
					t.Errorf("a run that lost its lock released a binding: %v", labels)
				}
				if audit := s.releaseOutcomes(t); len(audit) != 0 {
					t.Errorf("release audit rows after the lock was lost: %v", audit)
				}
				assertRecovered(t, s, l)
			case err != nil:
				assertNothingChanged(t, s, previous)
				assertRecovered(t, s, l)
			case c.mayRideOut:
				// The read was repeated once the server was back: the run
				// saw the whole picture after all, and is the recovery.
				checkCandidates(t, s.candidates(t), wantCandidates(l, s.Config.Policy()), s.released(t)...)
				if labels := s.bindingLabels(t)["control-empty"]; labels[hap.LabelDirty] != "true" {
					t.Errorf("the run did not release the empty binding: %v", labels)
				}
			default:
				t.Fatal("the run succeeded although PostgreSQL crashed under its write")
			}
		})
	}
}

// The server drops the job's connection in the middle of reading KEB's
// counts (as a failover or a terminated backend does): the read is
// repeated on a fresh connection and the run succeeds.
func TestARunRidesOutADroppedDatabaseConnection(t *testing.T) {
	testbed.Require(t)
	l := faultLandscape(37)
	s := newScene(t, l, releaseEverythingEmpty)
	env := s.open(t, time.Now)
	blocker, err := s.db.BeginTx(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.Exec("LOCK TABLE instances IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- runAll(testContext(t), env) }()
	waitForBlockedLock(t, s.db, "instances")
	var terminated int
	if err := s.db.QueryRowContext(testContext(t), `SELECT count(pg_terminate_backend(l.pid, 30000)) FROM pg_locks l
		JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'instances' AND NOT l.granted`).Scan(&terminated); err != nil || terminated != 1 {
		t.Fatalf("terminated %d backends: %v", terminated, err)
	}
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the run did not ride out a dropped connection: %v", err)
	}
	checkCandidates(t, s.candidates(t), wantCandidates(l, s.Config.Policy()), s.released(t)...)
}

// waitForBlockedLock polls until a session waits for a lock on table.
func waitForBlockedLock(t *testing.T, db *sql.DB, table string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testContext(t), time.Minute)
	defer cancel()
	if err := testbed.WaitForLockWait(ctx, db, table); err != nil {
		t.Fatal(err)
	}
}

// reconnect drops the pool whose connections a restart broke.
func (s *scene) reconnect(t *testing.T) {
	t.Helper()
	s.Reconnect()
	_ = s.db.Close()
	db, err := sql.Open("pgx", s.World.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	s.db = db
}

// A Pushgateway that is down or failing costs the run nothing but a logged
// error: its work stands and it exits 0.
func TestRunSucceedsWhenThePushgatewayIsDown(t *testing.T) {
	testbed.Require(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusInternalServerError)
	}))
	defer failing.Close()
	for name, url := range map[string]string{"refusing": closed.URL, "failing": failing.URL} {
		t.Run(name, func(t *testing.T) {
			l := faultLandscape(34)
			s := newScene(t, l, releaseEverythingEmpty)
			cmd, out := s.command(testContext(t), "run", "--pushgateway-url", url)
			if code := exitCode(t, cmd); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, out)
			}
			if !strings.Contains(out.String(), "Pushgateway failed") {
				t.Errorf("the failed push is not logged:\n%s", out)
			}
			checkCandidates(t, s.candidates(t), wantCandidates(l, s.Config.Policy()), s.released(t)...)
		})
	}
}

// Every external call has a bound: a Gardener or a database that accepts
// connections and never answers makes the run fail instead of hang. The
// test's own context has no deadline, so only the job's timeouts can end it.
func TestServersThatNeverAnswerFailTheRunInsteadOfHangingIt(t *testing.T) {
	testbed.Require(t)
	t.Run("gardener", func(t *testing.T) {
		hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		defer hang.Close()
		s := newScene(t, faultLandscape(35), releaseEverythingEmpty+"\n")
		s.Config.Gardener.RequestTimeout.Duration = 200 * time.Millisecond
		env, err := app.Open(context.Background(), app.Inputs{
			Config: s.Config, RESTConfig: &rest.Config{Host: hang.URL}, DatabaseURL: s.World.DatabaseURL,
			Getenv: func(string) string { return "" }, Log: quietLog,
		}, app.Needs{Gardener: true, Database: true, Migrate: true})
		if err != nil {
			t.Fatal(err)
		}
		defer env.Close()
		if err := runAll(context.Background(), env); err == nil || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline") && !strings.Contains(err.Error(), "Timeout") {
			t.Fatalf("run against a silent API server: %v, want a timeout", err)
		}
	})
	t.Run("database", func(t *testing.T) {
		silent, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer silent.Close()
		var held []net.Conn
		var mu sync.Mutex
		go func() {
			for {
				c, err := silent.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range held {
				_ = c.Close()
			}
		}()
		s := newScene(t, faultLandscape(36), releaseEverythingEmpty)
		s.Config.Database.ConnectTimeout.Duration = 300 * time.Millisecond
		_, err = app.Open(context.Background(), app.Inputs{
			Config: s.Config, RESTConfig: bed.Kube.Config(),
			DatabaseURL: "postgres://job:secret@" + silent.Addr().String() + "/keb?sslmode=disable",
			Getenv:      func(string) string { return "" }, Log: quietLog,
		}, app.Needs{Gardener: true, Database: true, Migrate: true})
		if err == nil {
			t.Fatal("connected to a server that never answers")
		}
	})
}
