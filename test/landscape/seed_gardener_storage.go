package landscape

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// gardenerStoragePrefix is where gardener-apiserver keeps its objects in
// etcd (its --etcd-prefix default), each under <group>/<resource>/<namespace>/<name>,
// stored as JSON in the storage version: core.gardener.cloud/v1beta1 for
// shoots, security.gardener.cloud/v1alpha1 for credentials bindings.
const gardenerStoragePrefix = "/registry-gardener/"

// SeedGardenerAPIServer writes l into namespace on the real
// gardener-apiserver by putting each object straight into its etcd storage,
// as a restored etcd backup holds them: no admission, no request per object.
// It is for the benchmark's large landscapes, which admission would take
// hours to load (LoadGardenerAPIServer: each binding's admission waits on a
// client held to five requests a second). What a job reads is served by the
// real server all the same: gardener-apiserver decodes, defaults and
// converts every stored object on every read, and its watch cache follows
// etcd.
//
// What admission looks up for bindings and shoots (the Project, the
// CloudProfiles, the Secrets) is created through the API first, as
// LoadGardenerAPIServer does, so that objects created later through the API
// are admitted. The legacy SecretBindings are stored like the rest: through
// admission they come at about two a second. Each shoot is stored as LoadGardenerAPIServer creates it
// (see encodeAdmittedShoot), with its status and the managedFields its
// writers would have left (see managedFields); a shoot being deleted
// carries Gardener's finalizer and a deletionTimestamp; a shoot may name a
// binding the landscape lacks. The labels and annotations admission adds on
// create are missing, a few hundred bytes of a shoot's 17 KB.
func SeedGardenerAPIServer(ctx context.Context, kube *testbed.Kube, namespace string, l *Landscape, progress func(done, total int)) error {
	c, err := newCreator(kube.Config(), namespace)
	if err != nil {
		return err
	}
	if err := c.createAdmissionFixtures(ctx, l); err != nil {
		return fmt.Errorf("seed landscape: %w", err)
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{kube.EtcdURL()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("seed landscape: connect to etcd: %w", err)
	}
	defer etcd.Close()
	legacy, err := l.legacySecretBindings(namespace)
	if err != nil {
		return fmt.Errorf("seed landscape: %w", err)
	}
	s := seeder{etcd: etcd, namespace: namespace, created: metav1.Now()}
	secretBindings, bindings := len(legacy), len(legacy)+len(l.Bindings)
	// One put per object, each at a revision of its own: the API servers'
	// watch caches take one event per revision, and would keep only the
	// first object of a transaction that wrote several.
	return runParallel(ctx, bindings+len(l.Shoots), loadWorkers, func(ctx context.Context, i int) error {
		switch {
		case i < secretBindings:
			return put(ctx, s.etcd, legacy[i], s.secretBinding)
		case i < bindings:
			return put(ctx, s.etcd, l.Bindings[i-secretBindings], s.binding)
		}
		return put(ctx, s.etcd, l.Shoots[i-bindings], s.shoot)
	}, progress)
}

// seeder writes objects of one namespace into gardener-apiserver's storage.
type seeder struct {
	etcd      *clientv3.Client
	namespace string
	created   metav1.Time
}

// put stores obj as encode makes it.
func put[T any](ctx context.Context, etcd *clientv3.Client, obj T, encode func(T) (key string, value []byte, err error)) error {
	key, value, err := encode(obj)
	if err != nil {
		return err
	}
	if _, err := etcd.Put(ctx, key, string(value)); err != nil {
		return fmt.Errorf("write %s to etcd: %w", key, err)
	}
	return nil
}

// meta is the metadata the API server would have given obj on create.
func (s *seeder) meta(m metav1.ObjectMeta) metav1.ObjectMeta {
	m.Namespace = s.namespace
	m.UID = uuid.NewUUID()
	m.CreationTimestamp = s.created
	m.Generation = 1
	m.ResourceVersion = ""
	return m
}

func (s *seeder) binding(b *securityv1alpha1.CredentialsBinding) (string, []byte, error) {
	stored := *b
	stored.TypeMeta = metav1.TypeMeta{APIVersion: securityv1alpha1.SchemeGroupVersion.String(), Kind: "CredentialsBinding"}
	stored.ObjectMeta = s.meta(b.ObjectMeta)
	stored.CredentialsRef.Namespace = s.namespace
	value, err := json.Marshal(&stored)
	if err != nil {
		return "", nil, fmt.Errorf("binding %s: %w", b.Name, err)
	}
	return gardenerStoragePrefix + "security.gardener.cloud/credentialsbindings/" + s.namespace + "/" + b.Name, value, nil
}

func (s *seeder) secretBinding(b *gardencorev1beta1.SecretBinding) (string, []byte, error) {
	stored := *b
	stored.ObjectMeta = s.meta(b.ObjectMeta)
	value, err := json.Marshal(&stored)
	if err != nil {
		return "", nil, fmt.Errorf("secret binding %s: %w", b.Name, err)
	}
	return gardenerStoragePrefix + "core.gardener.cloud/secretbindings/" + s.namespace + "/" + b.Name, value, nil
}

func (s *seeder) shoot(sh *Shoot) (string, []byte, error) {
	stored := admittedShoot(sh, s.namespace)
	stored.TypeMeta = metav1.TypeMeta{APIVersion: gardencorev1beta1.SchemeGroupVersion.String(), Kind: "Shoot"}
	stored.ObjectMeta = s.meta(stored.ObjectMeta)
	stored.Status = sh.Object.Status
	if sh.Deleting {
		stored.Finalizers = append(slices.Clip(stored.Finalizers), gardenerFinalizer)
		stored.DeletionTimestamp = &s.created
		stored.DeletionGracePeriodSeconds = new(int64)
	}
	fields, err := managedFields(stored, s.created, stored.APIVersion)
	if err != nil {
		return "", nil, fmt.Errorf("shoot %s: %w", sh.Object.Name, err)
	}
	stored.ManagedFields = fields
	value, err := json.Marshal(stored)
	if err != nil {
		return "", nil, fmt.Errorf("shoot %s: %w", sh.Object.Name, err)
	}
	return gardenerStoragePrefix + "core.gardener.cloud/shoots/" + s.namespace + "/" + sh.Object.Name, value, nil
}
