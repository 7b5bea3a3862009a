// Package testscene is the one set-up the integration tests of jobs,
// cmd/hap-reconciler and reliability share: a landscape loaded into a world
// of its own in a test bed, the job's configuration for it (parsed, and
// written as the file the CLI reads), the job wired to it as the CLI wires
// it, and the job's tables read through db.
package testscene

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// Scene is one loaded landscape.
type Scene struct {
	Bed       *testbed.Bed
	World     *testbed.World
	Landscape *landscape.Landscape
	// Config is the configuration file parsed over the defaults, with the
	// world's namespace, resolved. A test may tune it before Open, and
	// then resolves it again (config.Config.Resolve); the file keeps what
	// Load wrote.
	Config config.Config
	// ConfigPath is the file the CLI reads (--config).
	ConfigPath string
	// Bindings and Shoots are the world's namespace in the API server.
	Bindings, Shoots dynamic.ResourceInterface

	conn  *pgx.Conn
	store *db.Store
}

// Load creates a world named after name, loads l into it and writes
// configYAML as the configuration file. Everything is removed when the test
// ends.
func Load(t *testing.T, ctx context.Context, bed *testbed.Bed, name string, l *landscape.Landscape, configYAML string) *Scene {
	t.Helper()
	testbed.Require(t)
	w, err := landscape.LoadWorld(ctx, bed, name, l)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	if err := config.Parse([]byte(configYAML), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Namespace = w.Namespace
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(configYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	client, err := dynamic.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	return &Scene{
		Bed: bed, World: w, Landscape: l, Config: cfg, ConfigPath: path,
		Bindings: client.Resource(testbed.CredentialsBindingsResource).Namespace(w.Namespace),
		Shoots:   client.Resource(testbed.ShootsResource).Namespace(w.Namespace),
	}
}

// Wiring changes how Open wires the job; the zero value is the CLI's
// wiring against the scene, migrating the schema, logging to the test.
type Wiring struct {
	// Now is the job's clock.
	Now func() time.Time
	Log *zap.Logger
	// RESTConfig and DatabaseURL replace the scene's API server and
	// database (a proxy that injects faults, say).
	RESTConfig  *rest.Config
	DatabaseURL string
	// NoMigrate opens a schema that must already be current.
	NoMigrate bool
}

// Open wires the job in-process to the scene with s.Config, as the CLI
// does; it is closed when the test ends.
func (s *Scene) Open(t *testing.T, ctx context.Context, w Wiring) *app.Env {
	t.Helper()
	if w.RESTConfig == nil {
		w.RESTConfig = s.Bed.Kube.Config()
	}
	if w.DatabaseURL == "" {
		w.DatabaseURL = s.World.DatabaseURL
	}
	if w.Log == nil {
		w.Log = zaptest.NewLogger(t)
	}
	env, err := app.Open(ctx, app.Inputs{
		Config: s.Config, RESTConfig: w.RESTConfig, DatabaseURL: w.DatabaseURL,
		Getenv: func(string) string { return "" }, Log: w.Log, Now: w.Now,
	}, app.Needs{Gardener: true, Database: true, Migrate: !w.NoMigrate})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	return env
}

// Flags point the CLI at the scene.
func (s *Scene) Flags() []string {
	return []string{"--config", s.ConfigPath, "--namespace", s.World.Namespace,
		"--kubeconfig", s.Bed.Kube.KubeconfigPath(), "--database-url", s.World.DatabaseURL}
}

// Conn is the test's one connection to the world's database, as the
// superuser, opened on first use: KEB's side of the database (its
// instances table), which the job only reads. It serves one goroutine at a
// time; tests that poll must not open one per look.
func (s *Scene) Conn(t *testing.T, ctx context.Context) *pgx.Conn {
	t.Helper()
	if s.conn != nil && !s.conn.IsClosed() {
		return s.conn
	}
	conn, err := pgx.Connect(ctx, s.World.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	s.conn = conn
	return conn
}

// Store reads and writes the job's own tables the way the job does, opened
// on first use. The schema must be current (a run or migrate made it so).
func (s *Scene) Store(t *testing.T, ctx context.Context) *db.Store {
	t.Helper()
	if s.store != nil {
		return s.store
	}
	store, err := db.Open(ctx, s.World.DatabaseURL, db.Options{Schema: s.Config.Database.Schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	s.store = store
	return store
}

// Reconnect drops the connections Conn and Store hold, after the test
// restarted PostgreSQL under them; the next use opens fresh ones.
func (s *Scene) Reconnect() {
	if s.conn != nil {
		_ = s.conn.Close(context.Background())
		s.conn = nil
	}
	if s.store != nil {
		_ = s.store.Close()
		s.store = nil
	}
}
