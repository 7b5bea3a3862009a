package reliability

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// racePool is the pool the actor works in; the generated part of the
// landscape around it is background the job must leave alone.
const racePool = "race"

// world serializes every write that can add or remove a reference to a
// binding (the actor's) with every release (the job's, held by the API
// proxy, proxy_api_test.go), so that the state seen while holding it is the
// state at the moment of the release.
type world struct {
	mu sync.Mutex
	s  *scene
}

// references counts what references binding right now: active instances
// in KEB's table and shoots in Gardener. The caller holds mu.
func (w *world) references(ctx context.Context, binding string) (instances, shoots int, err error) {
	err = w.s.db.QueryRowContext(ctx, `SELECT count(*) FROM instances
		WHERE subscription_secret_name = $1 AND deleted_at = '0001-01-01 00:00:00+00'`, binding).Scan(&instances)
	if err != nil {
		return 0, 0, err
	}
	list, err := w.s.gardener.Resource(testbed.ShootsResource).Namespace(w.s.World.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	for _, sh := range list.Items {
		if name, _, _ := unstructured.NestedString(sh.Object, "spec", "credentialsBindingName"); name == binding {
			shoots++
		}
	}
	return instances, shoots, nil
}

// cluster is one of the actor's clusters.
type cluster struct {
	instanceID, runtimeID, ga, binding, shoot string
}

// actor behaves like KEB and the account-cleanup process together: it
// provisions (the one-statement pick, or a claim from the pool when the
// pick says so), creates and deletes shoots, deprovisions, gives bindings
// back itself and cleans dirty ones. Its choices follow its seed.
type actor struct {
	w        *world
	rng      *rand.Rand
	seed     uint64
	gas      []string
	clusters []*cluster
	n        int
	shoots   int
	// sketches builds the actor's shoots as KEB would create them, which
	// gardener-apiserver's admission takes; the trial's own landscape is
	// left as it was loaded.
	sketches *landscape.Landscape
	log      []string
}

func newActor(w *world, seed uint64) *actor {
	return &actor{w: w, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed: seed,
		gas: []string{"race-ga-1", "race-ga-2", "race-ga-3"}, sketches: landscape.New(seed)}
}

// step does one randomly chosen thing.
func (a *actor) step(ctx context.Context) error {
	switch p := a.rng.IntN(100); {
	case p < 35:
		return a.provision(ctx)
	case p < 60:
		return a.createShoot(ctx)
	case p < 82:
		return a.deprovision(ctx)
	case p < 90:
		return a.giveBack(ctx)
	default:
		return a.cleanUp(ctx)
	}
}

func (a *actor) note(format string, args ...any) {
	a.log = append(a.log, fmt.Sprintf(format, args...))
}

// locked runs one write while no release can happen.
func (a *actor) locked(fn func() error) error {
	a.w.mu.Lock()
	defer a.w.mu.Unlock()
	return fn()
}

func (a *actor) provision(ctx context.Context) error {
	a.n++
	c := &cluster{instanceID: fmt.Sprintf("race-%d-%d", a.seed, a.n), runtimeID: fmt.Sprintf("rt-%d-%d", a.seed, a.n),
		ga: a.gas[a.rng.IntN(len(a.gas))]}
	var claimNew bool
	err := a.locked(func() error {
		pick, err := testbed.Propose(ctx, a.w.s.db, provisioning.Request{
			InstanceID: c.instanceID, GlobalAccountID: c.ga, HyperscalerType: racePool})
		c.binding, claimNew = pick.Binding, pick.ClaimNew
		return err
	})
	if errors.Is(err, provisioning.ErrStale) {
		// No run has written the table yet: KEB takes its live path, here
		// a claim, which is always a choice KEB may make.
		a.note("no table yet for %s: claims", c.instanceID)
		claimNew, err = true, nil
	}
	if err != nil {
		return err
	}
	if !claimNew {
		a.note("%s picked %s for %s", c.ga, c.binding, c.instanceID)
		if err := a.locked(func() error { return a.insertInstance(ctx, c) }); err != nil {
			return err
		}
		a.clusters = append(a.clusters, c)
		return nil
	}
	free, err := a.bindings(ctx, func(l map[string]string) bool { return l[hap.LabelTenantName] == "" && l[hap.LabelDirty] == "" })
	if err != nil || len(free) == 0 {
		return err // the pool is empty: provisioning fails, as it would in KEB
	}
	b := free[a.rng.IntN(len(free))]
	c.binding = b.GetName()
	// The instance row names the binding before the claim lands, so a
	// claimed binding of the actor's is never empty for a moment.
	if err := a.locked(func() error { return a.insertInstance(ctx, c) }); err != nil {
		return err
	}
	labels := maps.Clone(b.GetLabels())
	labels[hap.LabelTenantName] = c.ga
	err = a.locked(func() error { return a.update(ctx, b, labels) })
	if apierrors.IsConflict(err) {
		a.note("%s lost the claim of %s; %s fails", c.ga, c.binding, c.instanceID)
		return a.locked(func() error { return a.deleteInstance(ctx, c) })
	}
	if err != nil {
		return err
	}
	a.note("%s claimed %s for %s", c.ga, c.binding, c.instanceID)
	a.clusters = append(a.clusters, c)
	return nil
}

func (a *actor) createShoot(ctx context.Context) error {
	var without []*cluster
	for _, c := range a.clusters {
		if c.shoot == "" {
			without = append(without, c)
		}
	}
	if len(without) == 0 {
		return nil
	}
	c := without[a.rng.IntN(len(without))]
	// Short, as Gardener holds project and shoot name to 21 characters.
	a.shoots++
	c.shoot = fmt.Sprintf("s-%d", a.shoots)
	shoot := a.sketches.AddShoot(landscape.ShootSpec{Name: c.shoot, BindingName: c.binding, RuntimeID: c.runtimeID,
		GlobalAccountID: c.ga, Pool: hapPool(racePool)})
	a.note("shoot %s on %s", c.shoot, c.binding)
	return a.locked(func() error { return landscape.CreateShoot(ctx, a.w.s.Bed.Kube, a.w.s.World.Namespace, shoot) })
}

func (a *actor) deprovision(ctx context.Context) error {
	if len(a.clusters) == 0 {
		return nil
	}
	i := a.rng.IntN(len(a.clusters))
	c := a.clusters[i]
	a.clusters = append(a.clusters[:i], a.clusters[i+1:]...)
	if c.shoot != "" {
		err := a.locked(func() error {
			return a.w.s.gardener.Resource(testbed.ShootsResource).Namespace(a.w.s.World.Namespace).Delete(ctx, c.shoot, metav1.DeleteOptions{})
		})
		if err != nil {
			return err
		}
	}
	a.note("deprovisioned %s from %s", c.instanceID, c.binding)
	return a.locked(func() error { return a.deleteInstance(ctx, c) })
}

// giveBack marks a claimed binding that none of the actor's clusters uses
// dirty, as KEB does when a GA's last cluster in it is gone.
func (a *actor) giveBack(ctx context.Context) error {
	used := map[string]bool{}
	for _, c := range a.clusters {
		used[c.binding] = true
	}
	claimed, err := a.bindings(ctx, func(l map[string]string) bool { return l[hap.LabelTenantName] != "" && l[hap.LabelDirty] == "" })
	if err != nil {
		return err
	}
	var idle []unstructured.Unstructured
	for _, b := range claimed {
		if !used[b.GetName()] {
			idle = append(idle, b)
		}
	}
	if len(idle) == 0 {
		return nil
	}
	b := idle[a.rng.IntN(len(idle))]
	labels := maps.Clone(b.GetLabels())
	labels[hap.LabelDirty] = "true"
	a.note("gave %s back", b.GetName())
	return ignoreConflict(a.locked(func() error { return a.update(ctx, b, labels) }))
}

// cleanUp is the account-cleanup process: a dirty binding goes back to the
// pool.
func (a *actor) cleanUp(ctx context.Context) error {
	dirty, err := a.bindings(ctx, func(l map[string]string) bool { return l[hap.LabelDirty] == "true" })
	if err != nil || len(dirty) == 0 {
		return err
	}
	b := dirty[a.rng.IntN(len(dirty))]
	labels := maps.Clone(b.GetLabels())
	delete(labels, hap.LabelDirty)
	delete(labels, hap.LabelTenantName)
	a.note("cleaned %s", b.GetName())
	return ignoreConflict(a.locked(func() error { return a.update(ctx, b, labels) }))
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func (a *actor) bindings(ctx context.Context, keep func(map[string]string) bool) ([]unstructured.Unstructured, error) {
	list, err := a.w.s.gardener.Resource(testbed.CredentialsBindingsResource).Namespace(a.w.s.World.Namespace).
		List(ctx, metav1.ListOptions{LabelSelector: hap.LabelHyperscalerType + "=" + racePool})
	if err != nil {
		return nil, err
	}
	var out []unstructured.Unstructured
	for _, b := range list.Items {
		if keep(b.GetLabels()) {
			out = append(out, b)
		}
	}
	return out, nil
}

// update writes labels guarded by the resourceVersion b was read at.
func (a *actor) update(ctx context.Context, b unstructured.Unstructured, labels map[string]string) error {
	b.SetLabels(labels)
	_, err := a.w.s.gardener.Resource(testbed.CredentialsBindingsResource).Namespace(a.w.s.World.Namespace).Update(ctx, &b, metav1.UpdateOptions{})
	return err
}

func (a *actor) insertInstance(ctx context.Context, c *cluster) error {
	_, err := a.w.s.db.ExecContext(ctx, `INSERT INTO instances (instance_id, runtime_id, global_account_id,
		subscription_secret_name, provider, service_plan_name, provisioning_parameters, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 'AWS', 'aws', '{}', now(), now())`, c.instanceID, c.runtimeID, c.ga, c.binding)
	return err
}

func (a *actor) deleteInstance(ctx context.Context, c *cluster) error {
	_, err := a.w.s.db.ExecContext(ctx, `UPDATE instances SET deleted_at = now(), updated_at = now() WHERE instance_id = $1`, c.instanceID)
	return err
}

func hapPool(hyperscalerType string) hap.Pool { return hap.Pool{HyperscalerType: hyperscalerType} }
