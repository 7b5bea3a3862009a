package differential

import (
	"context"
	"database/sql"
	"fmt"
	"maps"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

// cluster is one of KEB's runtimes in the stream.
type cluster struct {
	instanceID, ga string
	pool           hap.Pool
	shared         bool
	binding, shoot string
}

// world is KEB acting on the test bed: its instances table, Gardener's
// bindings and shoots, and the read path it calls.
type world struct {
	// changes records the stream's writes to Gardener (its KEB's Changed).
	changes
	sc *testscene.Scene
	db *sql.DB
	// dbs are the connection pools of KEB's replicas, db the first.
	dbs    []*sql.DB
	keb    *kebrules.KEB
	client *provisioning.Client
	// replicas are KEB's two replicas for the workers asking at once; the
	// first one's client is client.
	replicas []*replica
	// sketches builds shoots as KEB creates them, which
	// gardener-apiserver's admission takes.
	sketches *landscape.Landscape
	n        int
	shoots   int
	// profiles are the provider types whose CloudProfile exists.
	profiles map[string]bool
	// quietShoots creates shoots without logging the deprecation warnings
	// gardener-apiserver answers the generated shape with.
	quietShoots dynamic.ResourceInterface
	// shootsOn counts the shoots naming each binding. The stream is the
	// only writer of shoots, so this is what listing them would say; KEB's
	// free step and the cleanup read it, the oracle lists them live.
	shootsOn map[string]int
	// pending clusters have their instance row and no binding yet: KEB
	// has taken the provision request, the resolve step is still to come.
	pending []*cluster
	active  []*cluster
	// loseWithdrawal says whether the free step's withdrawal is lost this
	// time (the free step logs the error and carries on).
	loseWithdrawal func() bool
	// log is every action taken, the sequence a failure is replayed from.
	log []string
}

func (w *world) note(format string, args ...any) {
	w.log = append(w.log, fmt.Sprintf(format, args...))
}

// request is KEB's provision request: the instance row, created_at now,
// no binding yet.
func (w *world) request(ctx context.Context, ga string, p hap.Pool, shared bool) (*cluster, error) {
	w.n++
	c := &cluster{instanceID: fmt.Sprintf("inst-%d", w.n), ga: ga, pool: p, shared: shared}
	_, err := w.db.ExecContext(ctx, `INSERT INTO instances (instance_id, runtime_id, global_account_id, provider,
		service_plan_name, provisioning_parameters, created_at, updated_at)
		VALUES ($1, $1, $2, 'AWS', 'aws', '{}', now(), now())`, c.instanceID, c.ga)
	if err != nil {
		return nil, fmt.Errorf("insert instance %s: %w", c.instanceID, err)
	}
	w.note("request %s ga=%s pool=%s shared=%t", c.instanceID, ga, p, shared)
	return c, nil
}

// place is the rest of KEB's resolve step once it has a binding:
// updateInstance writes it into the row, and the runtime's shoot names it.
func (w *world) place(ctx context.Context, c *cluster, binding string) error {
	if err := w.writeBinding(ctx, c, binding); err != nil {
		return err
	}
	// Short: Gardener holds project and shoot name to 21 characters.
	w.shoots++
	c.shoot = fmt.Sprintf("s-%d", w.shoots)
	if err := w.createShoot(ctx, c); err != nil {
		return fmt.Errorf("create shoot of %s: %w", c.instanceID, err)
	}
	w.shootsOn[binding]++
	w.active = append(w.active, c)
	w.note("placed %s on %s (shoot %s)", c.instanceID, binding, c.shoot)
	return nil
}

// writeBinding is KEB's updateInstance: the resolved binding into the
// instance row. It touches nothing of the world's but the database.
func (w *world) writeBinding(ctx context.Context, c *cluster, binding string) error {
	c.binding = binding
	if _, err := w.db.ExecContext(ctx, `UPDATE instances SET subscription_secret_name = $2, updated_at = now()
		WHERE instance_id = $1`, c.instanceID, binding); err != nil {
		return fmt.Errorf("write binding of %s: %w", c.instanceID, err)
	}
	return nil
}

// createShoot creates the runtime's shoot, as KEB has Gardener create it.
// The first shoot of a provider goes through landscape.CreateShoot, which
// also creates the CloudProfile admission looks up; the others are created
// over the scene's client, in the shape landscape.CreateShoot gives them
// without their status, which nothing here reads: a new client per shoot
// would cost the stream a TLS handshake each.
func (w *world) createShoot(ctx context.Context, c *cluster) error {
	shoot := w.sketches.AddShoot(landscape.ShootSpec{Name: c.shoot, BindingName: c.binding, RuntimeID: c.instanceID,
		GlobalAccountID: c.ga, Pool: c.pool})
	provider := shoot.Object.Spec.Provider.Type
	if !w.profiles[provider] {
		if err := landscape.CreateShoot(ctx, w.sc.Bed.Kube, w.sc.World.Namespace, shoot); err != nil {
			return err
		}
		w.profiles[provider] = true
		return nil
	}
	obj := *shoot.Object
	obj.Namespace = w.sc.World.Namespace
	obj.Status = gardencorev1beta1.ShootStatus{}
	obj.Spec.SeedName, obj.Spec.Resources = nil, nil
	if api := obj.Spec.Kubernetes.KubeAPIServer; api != nil {
		withoutOIDC := *api
		withoutOIDC.OIDCConfig = nil
		obj.Spec.Kubernetes.KubeAPIServer = &withoutOIDC
	}
	if dns := obj.Spec.DNS; dns != nil && dns.Domain != nil {
		// Domains are unique across the bed's worlds.
		domain := w.sc.World.Namespace + "." + *dns.Domain
		namespaced := *dns
		namespaced.Domain = &domain
		obj.Spec.DNS = &namespaced
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&obj)
	if err != nil {
		return err
	}
	_, err = w.quietShoots.Create(ctx, &unstructured.Unstructured{Object: content}, metav1.CreateOptions{})
	return err
}

// fail ends a provisioning KEB could not resolve (guarded, or no free
// binding to claim): the instance is deleted.
func (w *world) fail(ctx context.Context, c *cluster, why string) error {
	w.note("failed %s: %s", c.instanceID, why)
	_, err := w.db.ExecContext(ctx, `UPDATE instances SET deleted_at = now(), updated_at = now() WHERE instance_id = $1`, c.instanceID)
	return err
}

// claim is KEB's claim of a free binding of the pool for ga.
func (w *world) claim(ctx context.Context, ga string, p hap.Pool) (string, error) {
	return w.keb.Claim(ctx, ga, p)
}

// update writes labels guarded by the resourceVersion b was read at.
func (w *world) update(ctx context.Context, b unstructured.Unstructured, labels map[string]string) error {
	return w.keb.Update(ctx, b, labels)
}

// recordClaim tells the table about a claim KEB made after ClaimNew.
func (w *world) recordClaim(ctx context.Context, req provisioning.Request, binding string) error {
	return w.recordClaimOn(ctx, w.client, req, binding)
}

// recordClaimOn is recordClaim through a replica's client.
func (w *world) recordClaimOn(ctx context.Context, client *provisioning.Client, req provisioning.Request, binding string) error {
	claim := provisioning.Claim{Request: req, BindingName: binding}
	if cfg := w.keb.Config; cfg.IsGlobalAccountAllowed(req.GlobalAccountID) {
		limit := cfg.LimitForProvider(kebProvider)
		claim.Limit = &limit
	}
	if err := client.RecordClaim(ctx, claim); err != nil {
		return fmt.Errorf("record claim of %s for %s: %w", binding, req.InstanceID, err)
	}
	return nil
}

// deprovision deletes the runtime's shoot and its instance (marking it
// deleted or removing the row), then runs KEB's free step on its binding.
func (w *world) deprovision(ctx context.Context, c *cluster, removeRow bool) error {
	if err := w.sc.Shoots.Delete(ctx, c.shoot, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete shoot %s: %w", c.shoot, err)
	}
	w.shootsOn[c.binding]--
	query := `UPDATE instances SET deleted_at = now(), updated_at = now() WHERE instance_id = $1`
	if removeRow {
		query = `DELETE FROM instances WHERE instance_id = $1`
	}
	if _, err := w.db.ExecContext(ctx, query, c.instanceID); err != nil {
		return fmt.Errorf("delete instance %s: %w", c.instanceID, err)
	}
	w.note("deprovisioned %s from %s (row removed %t)", c.instanceID, c.binding, removeRow)
	if c.shared {
		return nil
	}
	return w.freeStep(ctx, c.binding)
}

// freeStep is KEB's free step: a binding no other shoot names, and that
// is not shared, internal or dirty, is labelled dirty, then withdrawn from
// the candidate table.
func (w *world) freeStep(ctx context.Context, binding string) error {
	if w.shootsOn[binding] > 0 {
		return nil
	}
	for range kebrules.ClaimAttempts {
		b, err := w.sc.Bindings.Get(ctx, binding, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("free step: get %s: %w", binding, err)
		}
		l := b.GetLabels()
		if l[hap.LabelShared] == "true" || l[hap.LabelInternal] == "true" || l[hap.LabelDirty] == "true" {
			return nil
		}
		labels := maps.Clone(l)
		labels[hap.LabelDirty] = "true"
		err = w.update(ctx, *b, labels)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("free step: mark %s dirty: %w", binding, err)
		}
		if w.loseWithdrawal() {
			w.note("free step: %s dirty, its withdrawal lost", binding)
			return nil
		}
		w.note("free step: %s dirty, withdrawn", binding)
		return w.client.WithdrawBinding(ctx, provisioning.Withdrawal{BindingName: binding})
	}
	return fmt.Errorf("free step on %s: conflicts %d times", binding, kebrules.ClaimAttempts)
}

// cleanup is the subscription cleanup job on one dirty binding no shoot
// names: the account is wiped and the binding free again.
func (w *world) cleanup(ctx context.Context, pickOne func(n int) int) error {
	dirty, err := w.keb.List(ctx, kebrules.DirtySelector)
	if err != nil {
		return err
	}
	var idle []unstructured.Unstructured
	for _, b := range dirty {
		if w.shootsOn[b.GetName()] == 0 {
			idle = append(idle, b)
		}
	}
	if len(idle) == 0 {
		return nil
	}
	b := idle[pickOne(len(idle))]
	labels := maps.Clone(b.GetLabels())
	delete(labels, hap.LabelDirty)
	delete(labels, hap.LabelTenantName)
	if err := w.update(ctx, b, labels); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("clean %s: %w", b.GetName(), err)
	}
	w.note("cleaned %s", b.GetName())
	return nil
}

// removeActive takes c out of the active clusters.
func (w *world) removeActive(i int) *cluster {
	c := w.active[i]
	w.active = append(w.active[:i], w.active[i+1:]...)
	return c
}
