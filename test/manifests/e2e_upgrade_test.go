package manifests_test

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // KEB's driver
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/kebworkers"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// TestChartUpgradeAndRollbackWhileKEBProvisions installs the job's release
// of the schema before this tree's (kebworkers.OldModuleCommit: its chart
// and its image, hack/build-old-release.sh) on a real kubelet with KEB's
// values, then, while KEB's replicas provision through both pins of the
// module (test/kebworkers), upgrades it to this tree's chart and image
// (the pre-upgrade hook migrates), rolls it back as docs/deployment.md's
// block says (the hook's migrate --down with this tree's image, then
// helm rollback), and upgrades it again. After each change the serve pod
// of the release then current is Ready and its first candidates run has
// ended, successfully for this tree's (wantServing). Every answer KEB's
// replicas get is one KEB goes on from, no binding holds more than KEB's
// limit by KEB's count, and the schema ends at this tree's version; the
// figures (picks during each step, the longest) are logged. make
// e2e-upgrade runs it (docs/e2e.md).
func TestChartUpgradeAndRollbackWhileKEBProvisions(t *testing.T) {
	if !*e2e {
		t.Skip("the e2e on a real kubelet runs with make e2e-upgrade")
	}
	root := kebworkers.RepoRoot(t)
	newest, err := db.LatestVersion()
	if err != nil {
		t.Fatal(err)
	}
	kebworkers.CheckOldModuleCommit(t, root, int(newest))
	steps := newStepTimer(t)
	ctx := testbed.Context(t, 40*time.Minute)
	var old oldRelease
	var oldBin string
	steps.run("the release before: image, chart and module (hack/build-old-release.sh, hack/build-old-module.sh)", func() {
		old = buildOldRelease(t, root)
		oldBin = kebworkers.OldModuleBinary(t, ctx, root)
	})
	e, pg := startE2E(t, ctx, steps)
	steps.run("import the release before's image", func() {
		if err := e.node.ImportImage(ctx, old.image, old.reference()); err != nil {
			t.Fatal(err)
		}
	})

	u := &upgradeE2E{e: e, policy: writePolicy(t), head: e.chartImage()}
	var land kebworkers.Landscape
	steps.run("KEB's multi-account landscape: bindings in the project, instances in KEB's database", func() {
		land = u.landscape(t, pg)
	})
	steps.run("helm install of the release before", func() {
		u.release("install", old.chart, "--set", "hapReconciler.image.tag="+old.tag)
		u.wantServing(nil, old.reference())
	})
	if v := u.schemaVersion(t, land.DB); v != int(newest)-1 {
		t.Fatalf("the release before left the schema at version %d, want %d", v, newest-1)
	}

	run := kebworkers.New(ctx, land)
	var workers []*kebworkers.Worker
	for range 2 {
		workers = append(workers, &kebworkers.Worker{Pin: "old", GA: "ga-1", Module: kebworkers.StartOldModule(t, oldBin, land)})
	}
	for range 2 {
		workers = append(workers, &kebworkers.Worker{Pin: "new", GA: "ga-2", Module: kebworkers.NewModule(t, land)})
	}
	run.Start(t, workers...)
	changes := []struct {
		what  string
		do    func()
		image string
	}{
		{"helm upgrade to this tree's chart (the hook migrates)", func() { u.release("upgrade", chartDir) }, u.head},
		{"docs/deployment.md's rollback (the hook's migrate --down, helm rollback 1)", func() { u.rollBack(t, 1, 1) }, old.reference()},
		{"helm upgrade again", func() { u.release("upgrade", chartDir) }, u.head},
	}
	for _, c := range changes {
		run.WaitProvisioned(t, provisioningsPerChange)
		steps.run(c.what, func() {
			run.Step(t, c.what, func() error { c.do(); return nil })
			// The release's serve pod then current holds the table: its
			// first run rewrote it while KEB picked.
			u.wantServing(run, c.image)
		})
	}
	run.WaitProvisioned(t, provisioningsPerChange)
	run.Stop(t)
	run.Report(t)
	run.CheckLimits(t)
	if v := u.schemaVersion(t, land.DB); v != int(newest) {
		t.Errorf("the schema ends at version %d, want %d", v, newest)
	}
}

// provisioningsPerChange is how many provisionings each replica completes
// on each release before the next change.
const provisioningsPerChange = 5

// upgradeKEB is KEB's multi-account configuration in the upgrade e2e, as
// writePolicy gives it to the chart.
var upgradeKEB = kebrules.Config{Allowed: []string{"ga-1", "ga-2"}, Limits: map[string]int{"default": 3}, MinBindingsForGuard: 2}

// writePolicy is a values file over KEB's that switches KEB's
// multi-account support on for the replicas' GAs, with a limit of 3 for
// every provider (KEB's values name each).
func writePolicy(t *testing.T) string {
	t.Helper()
	var limits []string
	for _, p := range []string{"default", "aws", "gcp", "azure", "openstack", "alicloud", "gdch"} {
		limits = append(limits, fmt.Sprintf("%s: %d", p, upgradeKEB.Limits["default"]))
	}
	values := fmt.Sprintf("hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: [%s]\n    minBindingsForGuard: %d\n    limits: {%s}\n",
		strings.Join(upgradeKEB.Allowed, ", "), upgradeKEB.MinBindingsForGuard, strings.Join(limits, ", "))
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// oldRelease is hack/build-old-release.sh's output.
type oldRelease struct{ image, chart, tag string }

// reference is the image's reference with the chart's repository.
func (o oldRelease) reference() string {
	return "europe-docker.pkg.dev/kyma-project/prod/hap-reconciler:" + o.tag
}

func buildOldRelease(t *testing.T, root string) oldRelease {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root, "hack", "build-old-release.sh"), kebworkers.OldModuleCommit)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/build-old-release.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	dir := lines[len(lines)-1]
	tag, err := os.ReadFile(filepath.Join(dir, "tag"))
	if err != nil {
		t.Fatal(err)
	}
	return oldRelease{image: filepath.Join(dir, "image.tar"), chart: filepath.Join(dir, "chart"), tag: strings.TrimSpace(string(tag))}
}

// upgradeE2E is the release under change, KEB's policy values and this
// tree's image.
type upgradeE2E struct {
	e      *e2eRelease
	policy string
	head   string
}

// release installs or upgrades the release to chart with KEB's values and
// the policy.
func (u *upgradeE2E) release(verb, chart string, args ...string) {
	u.e.t.Helper()
	u.e.helmCmd(append([]string{verb, releaseName, chart, "--namespace", "kcp-system", "-f", kebValues, "-f", u.policy, "--timeout", "5m"}, args...)...)
}

// rollBack runs docs/deployment.md's rollback block as written: revert
// steps migrations with this tree's chart and image, then roll back to
// revision.
func (u *upgradeE2E) rollBack(t *testing.T, revision, steps int) {
	t.Helper()
	chart, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	u.e.guideBlock("# Roll the job back", "CHART="+chart,
		fmt.Sprintf("REVISION=%d", revision), fmt.Sprintf("STEPS=%d", steps))
}

// wantServing waits until the serve pod runs image and is Ready, and its
// first candidates run has ended. This tree's must succeed. The release
// before's may fail: its rewrite, which no pick's lock order can match,
// may deadlock with KEB's picks (40P01), and it does not run again until
// its next schedule or change; such a run is noted in the figures.
func (u *upgradeE2E) wantServing(run *kebworkers.Run, image string) {
	u.e.t.Helper()
	podIP := u.e.waitServeReady()
	if got := u.e.kubectlCmd("get", "deployment/"+releaseName, "-n", "kcp-system",
		"-o", "jsonpath={.spec.template.spec.containers[?(@.name==\"hap-reconciler\")].image}"); strings.TrimSpace(got) != image {
		u.e.t.Fatalf("the serve Deployment runs %q, want %q", got, image)
	}
	if image == u.head || run == nil {
		u.e.wantMetrics(podIP)
		return
	}
	if _, ok := u.e.firstRun(podIP); !ok {
		run.Note(fmt.Sprintf("the first candidates run of %s failed: %s", image, u.lastLogLine(podIP, `"job failed"`)))
	}
}

// lastLogLine is the last line of the log of the pod at podIP that holds
// marker.
func (u *upgradeE2E) lastLogLine(podIP, marker string) string {
	u.e.t.Helper()
	pods, err := u.e.core.CoreV1().Pods("kcp-system").List(u.e.ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("status.podIP", podIP).String()})
	if err != nil || len(pods.Items) == 0 {
		return fmt.Sprintf("(no pod at %s: %v)", podIP, err)
	}
	log, err := u.e.core.CoreV1().Pods("kcp-system").GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{}).DoRaw(u.e.ctx)
	if err != nil {
		return fmt.Sprintf("(log of %s: %v)", pods.Items[0].Name, err)
	}
	lines := strings.Split(string(log), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], marker) {
			return lines[i]
		}
	}
	return "(no line with " + marker + ")"
}

// landscape loads the replicas' bindings into the project -- one claimed
// by each GA with KEB's limit less one of its instances, and free ones to
// claim -- and KEB's instances into KEB's database, and opens KEB's side:
// its database as KEB's role, its live path on the project.
func (u *upgradeE2E) landscape(t *testing.T, pg *testbed.Postgres) kebworkers.Landscape {
	t.Helper()
	const ns = "garden-kyma-dev"
	pool := hap.Pool{HyperscalerType: "aws"}
	limit := upgradeKEB.Limits["default"]
	l := landscape.New(51)
	for _, ga := range upgradeKEB.Allowed {
		l.AddBinding(landscape.BindingSpec{Name: "aws-" + ga, Pool: pool, GlobalAccountID: ga})
	}
	for range 12 {
		l.AddBinding(landscape.BindingSpec{Pool: pool})
	}
	if err := landscape.LoadKube(u.e.ctx, u.e.kube, ns, l, nil); err != nil {
		t.Fatal(err)
	}
	url := pg.RoleURL(kebRole, kebPassword, "broker")
	kebDB, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kebDB.Close() })
	for _, ga := range upgradeKEB.Allowed {
		for i := range limit - 1 {
			if _, err := kebDB.ExecContext(u.e.ctx, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
				provisioning_parameters, created_at, updated_at) VALUES ($1, $1, $2, $3, '{}', now(), now())`,
				fmt.Sprintf("%s-%d", ga, i), ga, "aws-"+ga); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg := u.e.kube.Config()
	client := dynamic.NewForConfigOrDie(cfg)
	keb := &kebrules.KEB{Bindings: client.Resource(testbed.CredentialsBindingsResource).Namespace(ns),
		Shoots: client.Resource(testbed.ShootsResource).Namespace(ns), DB: kebDB, Config: upgradeKEB}
	return kebworkers.Landscape{DB: kebDB, DatabaseURL: url, KEB: keb, Gardener: cfg, Namespace: ns, Pool: pool, Limit: limit,
		Request: func(instance, ga string) provisioning.Request {
			return provisioning.Request{InstanceID: instance, GlobalAccountID: ga, HyperscalerType: pool.HyperscalerType,
				ProviderType: "aws", Account: provisioning.AccountFor(upgradeKEB, upgradeKEB.MinBindingsForGuard, ga, "aws")}
		}}
}

func (u *upgradeE2E) schemaVersion(t *testing.T, kebDB *sql.DB) int {
	t.Helper()
	var v int
	if err := kebDB.QueryRowContext(u.e.ctx, `SELECT version FROM hap.hap_reconciler_migrations`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
