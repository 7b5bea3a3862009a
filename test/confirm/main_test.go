// Package confirm holds the read path to what Gardener shows at the moment
// KEB asks: the candidate table proposes from the job's snapshot, Gardener
// confirms through KEB's own kind of client (test/kebrules), and every
// change in Gardener since the snapshot (a binding added to a shared pool,
// a label changed by hand, a withdrawal that failed, a binding claimed on
// KEB's live path) ends in KEB's own answer or in KEB's live path, never in
// a foreign, dirty or withdrawn binding. On the real gardener-apiserver
// and PostgreSQL, through KEB's driver (lib/pq).
package confirm

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	_ "github.com/lib/pq" // KEB's driver
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

var bed *testbed.Bed

func TestMain(m *testing.M) { testbed.Main(m, testbed.Setup{Bed: &bed}) }

// KEB's multi-account configuration in these tests, and the job's copy.
var kebConfig = kebrules.Config{Allowed: []string{"ga-1", "ga-2"}, Limits: map[string]int{"default": 3}, MinBindingsForGuard: 2}

const jobConfig = `
hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: [ga-1, ga-2]
    minBindingsForGuard: 2
    limits: {default: 3}
release: {enabled: false}
`

var awsPool = hap.Pool{HyperscalerType: "aws"}

// scene is a landscape in Gardener, KEB's database beside it, the job to
// compute the table, and KEB's read path on KEB's driver.
type scene struct {
	t      *testing.T
	ctx    context.Context
	sc     *testscene.Scene
	env    *app.Env
	db     *sql.DB
	keb    *kebrules.KEB
	client *provisioning.Client
	n      int
}

func newScene(t *testing.T, l *landscape.Landscape) *scene {
	t.Helper()
	ctx := testbed.Context(t, 3*time.Minute)
	sc := testscene.Load(t, ctx, bed, "confirm", l, jobConfig)
	env := sc.Open(t, ctx, testscene.Wiring{Log: zaptest.NewLogger(t, zaptest.Level(zapcore.WarnLevel))})
	db, err := sql.Open("postgres", sc.World.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	keb := &kebrules.KEB{Bindings: sc.Bindings, Shoots: sc.Shoots, DB: db, Config: kebConfig}
	client := &provisioning.Client{DB: db, Gardener: keb.Gardener(), Timeout: 30 * time.Second, HoldClaims: true}
	t.Cleanup(func() { _ = client.Close() })
	return &scene{t: t, ctx: ctx, sc: sc, env: env, db: db, keb: keb, client: client}
}

// computeTable runs the candidates job once, as the CronJob does.
func (s *scene) computeTable() {
	s.t.Helper()
	if err := s.env.Runner.Run(s.ctx, jobs.Options{Jobs: []string{jobs.JobCandidates}}); err != nil {
		s.t.Fatalf("candidates run: %v", err)
	}
}

// placed is KEB with an active instance of ga on binding, created at the
// provision request and its binding written by the resolve step.
func (s *scene) placed(ga, binding string) string {
	s.t.Helper()
	s.n++
	id := fmt.Sprintf("inst-%d", s.n)
	if _, err := s.db.ExecContext(s.ctx, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
		provisioning_parameters, created_at, updated_at) VALUES ($1, $1, $2, $3, '{}', now(), now())`, id, ga, binding); err != nil {
		s.t.Fatal(err)
	}
	return id
}

// requested is KEB's provision request for ga: the instance row, no binding.
func (s *scene) requested(ga string) string { return s.placed(ga, "") }

// label sets (or with "" removes) labels of a binding in Gardener, as an
// operator or the cleanup does.
func (s *scene) label(binding string, kv ...string) {
	s.t.Helper()
	labels := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			labels[kv[i]] = nil
		} else {
			labels[kv[i]] = kv[i+1]
		}
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":%s}}`, mustJSON(labels))
	if _, err := s.sc.Bindings.Patch(s.ctx, binding, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("label %s: %v", binding, err)
	}
}

// request is what KEB's resolve step asks for instance of ga in pool, with
// KEB's multi-account decision.
func (s *scene) request(instance, ga string, pool hap.Pool) provisioning.Request {
	return provisioning.Request{InstanceID: instance, GlobalAccountID: ga, HyperscalerType: pool.HyperscalerType,
		EUAccess: pool.EUAccess, ProviderType: "aws", Account: provisioning.AccountFor(kebConfig, kebConfig.MinBindingsForGuard, ga, "aws")}
}

// withdrawn reads why the table withdrew binding, "" when it did not.
func (s *scene) withdrawn(binding string) string {
	s.t.Helper()
	var reason string
	err := s.db.QueryRowContext(s.ctx, `SELECT reason FROM hap.withdrawn_bindings WHERE binding_name = $1`, binding).Scan(&reason)
	if err != nil && err != sql.ErrNoRows {
		s.t.Fatal(err)
	}
	return reason
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (s *scene) exec(query string, args ...any) {
	s.t.Helper()
	if _, err := s.db.ExecContext(s.ctx, query, args...); err != nil {
		s.t.Fatalf("%s: %v", query, err)
	}
}
