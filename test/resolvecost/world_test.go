package resolvecost

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq" // KEB's driver
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

// clusterLimit is the clusters per binding of KEB's multi-account
// configuration and of the job's copy, as in test/bench: every GA is on the
// allowlist, no guard.
const clusterLimit = 200

// KEB's database pool as KEB's storage configures it by default
// (internal/storage/config.go, Config: MaxOpenConns 8, MaxIdleConns 2,
// ConnMaxLifetime 30m; internal/storage/storage.go sets them); the chart
// does not change them. With more workers at once than idle connections,
// a worker's statement often opens a connection (and prepares the
// statement on it) first.
const (
	kebMaxOpenConns    = 8
	kebMaxIdleConns    = 2
	kebConnMaxLifetime = 30 * time.Minute
)

var kebConfig = kebrules.Config{Allowed: []string{"*"}, Limits: map[string]int{"default": clusterLimit}}

var jobConfig = fmt.Sprintf(`hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    limits: {default: %d}
release: {enabled: false}
`, clusterLimit)

// world is one landscape in the bed with both of KEB's ways to resolve a
// binding wired to it.
type world struct {
	name      string
	env       *app.Env
	db        *sql.DB
	keb       *kebrules.KEB
	client    *provisioning.Client
	trusted   *provisioning.Client
	landscape *landscape.Landscape
	instances atomic.Int64
}

// load seeds l into a world of its own (gardener-apiserver's storage, as
// test/bench does, admission would take hours at the larger sizes; KEB's
// instances table with KEB's index for the read path) and wires the job
// in-process as the CLI does.
func load(t *testing.T, ctx context.Context, name string, l *landscape.Landscape) *world {
	t.Helper()
	w, err := bed.NewWorld(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := landscape.SeedGardenerAPIServer(ctx, bed.Kube, w.Namespace, l, nil); err != nil {
		t.Fatal(err)
	}
	if err := landscape.LoadInstances(ctx, w.DatabaseURL, l); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	if err := config.Parse([]byte(jobConfig), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Namespace = w.Namespace
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	sc := &testscene.Scene{Bed: bed, World: w, Landscape: l, Config: cfg}
	env := sc.Open(t, ctx, testscene.Wiring{Log: zap.NewNop()})

	// KEB's side: a pool on lib/pq, its Gardener client, and the adopted
	// step's client over both.
	db, err := sql.Open("postgres", w.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(kebMaxOpenConns)
	db.SetMaxIdleConns(kebMaxIdleConns)
	db.SetConnMaxLifetime(kebConnMaxLifetime)
	bindings, shoots, err := kebGardener(bed.Kube.Config(), w.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	keb := &kebrules.KEB{Bindings: bindings, Shoots: shoots, DB: db, Config: kebConfig}
	// The confirmed step asks Gardener whatever the table's mark; the
	// trusted one is the guide's first tier (no Gardener) on a table whose
	// mark stands for as long as the cell, as serve's watch keeps it.
	client := &provisioning.Client{DB: db, Gardener: keb.Gardener(), SeenWithin: -1}
	trusted := &provisioning.Client{DB: db, SeenWithin: 24 * time.Hour}
	t.Cleanup(func() { _ = client.Close(); _ = trusted.Close() })
	return &world{name: name, env: env, db: db, keb: keb, client: client, trusted: trusted, landscape: l}
}

// computeTable runs the candidates job once, as the CronJob does.
func (w *world) computeTable(ctx context.Context) error {
	if err := w.env.Runner.Run(ctx, jobs.Options{Jobs: []string{jobs.JobCandidates}}); err != nil {
		return fmt.Errorf("candidates run: %w", err)
	}
	// The mark serve's watch writes once it has proved the table current.
	if _, err := w.db.ExecContext(ctx, `UPDATE hap.candidates_computed SET gardener_seen_at = now()`); err != nil {
		return fmt.Errorf("mark the table seen: %w", err)
	}
	return nil
}

// requested is KEB's provision request: the instance row of ga, no binding
// yet. Not part of the step.
func (w *world) requested(ctx context.Context, ga string) (string, error) {
	id := fmt.Sprintf("rc-%s-%07d", w.name, w.instances.Add(1))
	_, err := w.db.ExecContext(ctx, `INSERT INTO instances (instance_id, runtime_id, global_account_id, provisioning_parameters,
		created_at, updated_at) VALUES ($1, $1, $2, '{}', now(), now())`, id, ga)
	return id, err
}

// placed is KEB's update of the instance row with the binding the step
// chose (KEB's resolve step writes it into the instance and updates the
// row): the last part of the step on both paths.
func (w *world) placed(ctx context.Context, id, binding string) error {
	_, err := w.db.ExecContext(ctx, `UPDATE instances SET subscription_secret_name = $2, updated_at = now() WHERE instance_id = $1`, id, binding)
	return err
}

// request is one provisioning: a GA and the pool it asks in, with the
// runtime's provider type.
type request struct {
	ga       string
	pool     hap.Pool
	provider string
	shared   bool
}

// tableRequest is what KEB's adopted step asks the table for id.
func (r request) tableRequest(id string) provisioning.Request {
	req := provisioning.Request{InstanceID: id, HyperscalerType: r.pool.HyperscalerType, EUAccess: r.pool.EUAccess, ProviderType: r.provider}
	if !r.shared {
		req.GlobalAccountID = r.ga
		req.Account = provisioning.AccountFor(kebConfig, kebConfig.MinBindingsForGuard, r.ga, r.provider)
	}
	return req
}

// requests draws n provisionings of the given kind. Dedicated: a GA in a
// pool where it holds a binding, as most provisionings are. Shared: any GA
// in the shared pool.
func requests(l *landscape.Landscape, shared bool, n int, seed uint64) []request {
	var choices []request
	seen := map[request]bool{}
	for _, b := range l.Bindings {
		profile, ok := profileOf(b.Labels)
		if !ok || profile.Shared != shared || b.Labels[hap.LabelDirty] == "true" {
			continue
		}
		if shared {
			if b.Labels[hap.LabelShared] != "true" {
				continue
			}
			for _, ga := range l.GlobalAccounts {
				choices = append(choices, request{ga: ga, pool: profile.Pool, provider: profile.ProviderType, shared: true})
			}
			break
		}
		ga := b.Labels[hap.LabelTenantName]
		if ga == "" {
			continue
		}
		r := request{ga: ga, pool: profile.Pool, provider: profile.ProviderType}
		if !seen[r] {
			seen[r] = true
			choices = append(choices, r)
		}
	}
	if len(choices) == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	out := make([]request, n)
	for i := range out {
		out[i] = choices[rng.IntN(len(choices))]
	}
	return out
}

// profileOf is the landscape's pool a binding's labels put it in.
func profileOf(labels map[string]string) (landscape.PoolProfile, bool) {
	for _, p := range landscape.Pools {
		if p.Pool.HyperscalerType == labels[hap.LabelHyperscalerType] && p.Pool.EUAccess == (labels[hap.LabelEUAccess] == "true") {
			return p, true
		}
	}
	return landscape.PoolProfile{}, false
}
