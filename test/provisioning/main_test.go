package provisioning_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var pg *testbed.Postgres

func TestMain(m *testing.M) { testbed.Main(m, testbed.Setup{Postgres: &pg}) }

func testContext(t *testing.T) context.Context {
	return testbed.Context(t, 3*time.Minute)
}

var databaseSeq atomic.Int64

// bed is one fresh database with the job's schema: the job's side through
// db.Store, KEB's side through a plain *sql.DB, as KEB would hold it.
type bed struct {
	dbname string
	url    string
	store  *db.Store
	keb    *sql.DB
}

func newBed(t *testing.T) *bed { return newBedOn(t, pg) }

// newBedOn is newBed in a database of server.
func newBedOn(t *testing.T, server *testbed.Postgres) *bed {
	t.Helper()
	ctx := testContext(t)
	name := fmt.Sprintf("prov_test_%d", databaseSeq.Add(1))
	url, err := server.NewDatabase(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	store, err := db.Open(ctx, url, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return &bed{dbname: name, url: url, store: store, keb: openKEB(t, url)}
}

func openKEB(t *testing.T, url string) *sql.DB {
	t.Helper()
	keb, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	keb.SetMaxOpenConns(60)
	t.Cleanup(func() { _ = keb.Close() })
	return keb
}

const ttl = time.Hour

// sharedUser is the GA of the runtimes the tests place in a shared pool.
const sharedUser = "ga-of-a-shared-runtime"

func (b *bed) replace(t *testing.T, rows []hap.Candidate, absorbed []string) {
	t.Helper()
	b.seedInstances(t, rows)
	if err := b.store.ReplaceCandidates(testContext(t), rows, absorbed, time.Now(), ttl); err != nil {
		t.Fatalf("ReplaceCandidates: %v", err)
	}
}

// requested is KEB creating the instance row at the provision request,
// before its resolve step picks: a reservation counts while that row is
// active and carries no binding yet. A row already there is left alone.
func (b *bed) requested(ctx context.Context, instanceID, ga string) error {
	ga = cmp.Or(ga, sharedUser)
	_, err := b.keb.ExecContext(ctx, `INSERT INTO instances (instance_id, runtime_id, global_account_id,
		provisioning_parameters, created_at, updated_at) VALUES ($1, $1, $2, '{}', now(), now()) ON CONFLICT DO NOTHING`, instanceID, ga)
	return err
}

func (b *bed) pick(ctx context.Context, instanceID, ga string) (string, bool, error) {
	if err := b.requested(ctx, instanceID, ga); err != nil {
		return "", false, err
	}
	pick, err := testbed.Propose(ctx, b.keb, provisioning.Request{
		InstanceID: instanceID, GlobalAccountID: ga, HyperscalerType: "aws",
	})
	return pick.Binding, pick.ClaimNew, err
}

func (b *bed) mustPick(t *testing.T, instanceID, ga string) string {
	t.Helper()
	name, claimNew, err := b.pick(testContext(t), instanceID, ga)
	if err != nil || claimNew {
		t.Fatalf("pick for %s in %q: %q, claimNew %v, %v", instanceID, ga, name, claimNew, err)
	}
	return name
}

// reserved reads, per candidate row, the reservations held on its binding.
func (b *bed) reserved(t *testing.T) map[string]int {
	t.Helper()
	rows, err := b.store.Candidates(testContext(t), hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.BindingName] = r.Reserved
	}
	return out
}

func (b *bed) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if err := pg.Exec(testContext(t), b.dbname, sql, args...); err != nil {
		t.Fatal(err)
	}
}

// seedInstances makes KEB's instances table hold what rows say of it: each
// row's DBCount active instances on its binding (its GA's own for a
// dedicated row, of sharedUser for a shared one), made up by rows named
// fx-<binding>-<n> created a day ago, so that a pick, which counts KEB's
// table, sees the counts the rows were decided on.
func (b *bed) seedInstances(t *testing.T, rows []hap.Candidate) {
	t.Helper()
	for _, r := range rows {
		owner := cmp.Or(r.GlobalAccountID, sharedUser)
		var have int
		if err := b.keb.QueryRowContext(testContext(t), `SELECT count(*) FROM instances WHERE subscription_secret_name = $1
			AND deleted_at = '0001-01-01 00:00:00+00' AND global_account_id = $2 AND subscription_global_account_id = ''`,
			r.BindingName, owner).Scan(&have); err != nil {
			t.Fatal(err)
		}
		for n := have; n < r.DBCount; n++ {
			b.exec(t, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
				provisioning_parameters, created_at, updated_at) VALUES ($1, $1, $2, $3, '{}', now() - interval '1 day', now() - interval '1 day')`,
				fmt.Sprintf("fx-%s-%d", r.BindingName, n), owner, r.BindingName)
		}
		if have > r.DBCount {
			b.exec(t, `DELETE FROM instances WHERE instance_id IN (SELECT instance_id FROM instances
				WHERE instance_id LIKE 'fx-' || $1 || '-%' ORDER BY instance_id DESC LIMIT $2)`, r.BindingName, have-r.DBCount)
		}
	}
}

// writeInstance is KEB recording the instance it provisioned on binding:
// the resolve step's write into the row the request created, or a new row.
func (b *bed) writeInstance(t *testing.T, instanceID, ga, binding string) {
	t.Helper()
	b.exec(t, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
		provisioning_parameters, created_at, updated_at) VALUES ($1, $1, $2, $3, '{}', now(), now())
		ON CONFLICT (instance_id) DO UPDATE SET subscription_secret_name = excluded.subscription_secret_name, updated_at = now()`,
		instanceID, ga, binding)
}

var aws = hap.Pool{HyperscalerType: "aws"}

func limit(n int) *int { return &n }

// candidate is a selectable row of the aws pool.
func candidate(ga, binding string, effective, rank int, clusterLimit *int) hap.Candidate {
	return hap.Candidate{
		GlobalAccountID: ga, Pool: aws, BindingName: binding,
		DBCount: effective, EffectiveCount: effective, Limit: clusterLimit, Selectable: true, Rank: rank,
	}
}
