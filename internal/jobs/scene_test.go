package jobs_test

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

var (
	aws = hap.Pool{HyperscalerType: "aws"}

	releaseOnly = jobs.Options{Jobs: []string{jobs.JobRelease}}
)

// busyBinding holds three running clusters in every scene, so both sides of
// the fleet have clusters and the global guard passes.
const busyBinding = "busy-aws"

// background is a small generated landscape (free, dirty, internal, shared
// and claimed bindings, clusters, KEB's history) plus the busy binding.
func background(seed uint64) *landscape.Landscape {
	l := landscape.Generate(landscape.Options{Seed: seed, GlobalAccounts: 2, ShootsPerGlobalAccount: 2, FreeBindingsPerPool: 1})
	l.AddBinding(landscape.BindingSpec{Name: busyBinding, Pool: aws, GlobalAccountID: "ga-busy"})
	for range 3 {
		cluster(l, "ga-busy", busyBinding)
	}
	return l
}

// cluster plants a running cluster of ga on binding: its shoot and its
// active instance.
func cluster(l *landscape.Landscape, ga, binding string) {
	runtimeID := fmt.Sprintf("rt-%s-%d", binding, len(l.Shoots))
	l.AddShoot(landscape.ShootSpec{BindingName: binding, RuntimeID: runtimeID, GlobalAccountID: ga, Pool: aws})
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.AddInstance(landscape.Instance{
		InstanceID: "inst-" + runtimeID, RuntimeID: runtimeID, GlobalAccountID: ga,
		SubscriptionSecretName: binding, Provider: "AWS", ServicePlanName: "aws",
		ProvisioningParameters: "{}", CreatedAt: created, UpdatedAt: created,
	})
}

// emptyBinding plants an aws binding claimed by ga that nothing uses.
func emptyBinding(l *landscape.Landscape, name, ga string) {
	l.AddBinding(landscape.BindingSpec{Name: name, Pool: aws, GlobalAccountID: ga})
}

// eligible names the bindings the landscape's truth lets go once the grace
// period has passed, in name order.
func eligible(l *landscape.Landscape) []string {
	plan := hap.DecideRelease(hap.NewTally(l.Snapshot()), nil, hap.ReleaseRules{MaxPerRun: math.MaxInt}, time.Now())
	var names []string
	for _, d := range plan.Release {
		names = append(names, d.Binding.Name)
	}
	slices.Sort(names)
	return names
}

// clock is the job's time, moved by the test, so that a grace period
// passes without waiting for it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// scene is a landscape loaded into a world of its own, with the job wired
// to it the way the CLI wires it, on a clock the test moves.
type scene struct {
	*testscene.Scene
	clock *clock
	env   *app.Env
}

// newScene loads l into a new world; tune, when set, adjusts the default
// configuration.
func newScene(t *testing.T, l *landscape.Landscape, tune func(*config.Config)) *scene {
	t.Helper()
	s := &scene{
		Scene: testscene.Load(t, testContext(t), bed, "release", l, ""),
		clock: &clock{now: time.Now().UTC().Truncate(time.Microsecond)},
	}
	if tune != nil {
		tune(&s.Config)
	}
	if err := s.Config.Resolve(); err != nil {
		t.Fatal(err)
	}
	s.env = s.open(t, bed.Kube.Config(), s.World.DatabaseURL, true)
	return s
}

// open wires a job to the scene through the given API configuration and
// database URL, on the scene's clock.
func (s *scene) open(t *testing.T, restConfig *rest.Config, databaseURL string, migrate bool) *app.Env {
	t.Helper()
	return s.Open(t, testContext(t), testscene.Wiring{Now: s.clock.Now, RESTConfig: restConfig, DatabaseURL: databaseURL, NoMigrate: !migrate})
}

func (s *scene) run(t *testing.T, opts jobs.Options) error {
	t.Helper()
	return s.env.Runner.Run(testContext(t), opts)
}

func (s *scene) mustRun(t *testing.T, opts jobs.Options) {
	t.Helper()
	if err := s.run(t, opts); err != nil {
		t.Fatalf("run %v: %v", opts.Jobs, err)
	}
}

// startClocks runs the release job once, which starts the clock of every
// empty binding, and moves time past the grace period.
func (s *scene) startClocks(t *testing.T) {
	t.Helper()
	s.mustRun(t, releaseOnly)
	s.clock.Advance(s.Config.Jobs.Release.GracePeriod.Duration + time.Minute)
}

func (s *scene) binding(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := s.Bindings.Get(testContext(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *scene) labels(t *testing.T, name string) map[string]string {
	t.Helper()
	return s.binding(t, name).GetLabels()
}

// released tells whether the binding carries either mode's release.
func (s *scene) released(t *testing.T, name string) bool {
	t.Helper()
	l := s.labels(t, name)
	_, claimed := l[hap.LabelTenantName]
	return l[hap.LabelDirty] == "true" || !claimed
}

// versions maps every binding of the scene to its resourceVersion.
func (s *scene) versions(t *testing.T) map[string]string {
	t.Helper()
	list, err := s.Bindings.List(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, b := range list.Items {
		out[b.GetName()] = b.GetResourceVersion()
	}
	return out
}

// leftEmptyPastGrace is a scene whose binding left-empty, claimed by a GA
// that has gone, has been empty for longer than the grace period: the next
// release run gives it back unless something stops it.
func leftEmptyPastGrace(t *testing.T, seed uint64) *scene {
	t.Helper()
	l := background(seed)
	emptyBinding(l, "left-empty", "ga-gone")
	s := newScene(t, l, nil)
	s.startClocks(t)
	return s
}

// runReleasingNothing runs the release job and fails the test, saying why
// nothing should have been released, if any binding changed. It returns the
// run's error for the test to judge.
func (s *scene) runReleasingNothing(t *testing.T, why string) error {
	t.Helper()
	before := s.versions(t)
	err := s.run(t, releaseOnly)
	if changed := s.changedSince(t, before); len(changed) > 0 {
		t.Errorf("released %v %s", changed, why)
	}
	return err
}

// changedSince names the bindings whose resourceVersion moved, in order.
func (s *scene) changedSince(t *testing.T, before map[string]string) []string {
	t.Helper()
	var changed []string
	for name, version := range s.versions(t) {
		if before[name] != version {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	return changed
}

// setLabel changes one label of a binding, as another actor would.
func (s *scene) setLabel(t *testing.T, binding, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if _, err := s.Bindings.Patch(testContext(t), binding, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// addShoot creates a shoot in the scene's namespace and returns its name.
func (s *scene) addShoot(t *testing.T, spec landscape.ShootSpec) string {
	t.Helper()
	return s.AddShoot(t, testContext(t), spec)
}

func (s *scene) deleteShoot(t *testing.T, name string) {
	t.Helper()
	if err := s.Shoots.Delete(testContext(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// exec runs SQL as the superuser in the scene's database.
func (s *scene) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if err := bed.Postgres.Exec(testContext(t), s.World.DatabaseName, sql, args...); err != nil {
		t.Fatal(err)
	}
}

// insertInstance is KEB recording an active instance on binding.
func (s *scene) insertInstance(t *testing.T, id, ga, binding string) {
	t.Helper()
	s.exec(t, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
		provisioning_parameters, created_at, updated_at) VALUES ($1, $1, $2, $3, '{}', now(), now())`, id, ga, binding)
}

// selectable tells whether provisioning may pick binding.
func (s *scene) selectable(t *testing.T, binding string) bool {
	t.Helper()
	rows, err := s.Store(t, testContext(t)).Candidates(testContext(t), hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rows, func(c hap.StoredCandidate) bool { return c.BindingName == binding })
	if i < 0 {
		t.Fatalf("no candidate row of %s", binding)
	}
	return rows[i].Selectable
}

// audit returns the release history of binding, oldest first: the
// outcomes, without the intent row written ahead of each label update.
func (s *scene) audit(t *testing.T, binding string) []hap.ReleaseRecord {
	t.Helper()
	history, err := s.Store(t, testContext(t)).ReleaseHistory(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []hap.ReleaseRecord
	for _, r := range history {
		if r.BindingName == binding && r.Outcome != hap.OutcomeIntent {
			out = append(out, r)
		}
	}
	return out
}

// outcomes lists the audited outcomes of binding, oldest first.
func (s *scene) outcomes(t *testing.T, binding string) []string {
	t.Helper()
	var out []string
	for _, r := range s.audit(t, binding) {
		out = append(out, r.Outcome)
	}
	return out
}
