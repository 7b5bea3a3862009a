package landscape

import (
	"encoding/json"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
)

// encodeBinding is the create request's body for b in namespace: the
// referenced secret lives in the project namespace, which the generator
// cannot know. b itself is left as generated.
func encodeBinding(b *securityv1alpha1.CredentialsBinding, namespace string) ([]byte, error) {
	loaded := *b
	loaded.CredentialsRef.Namespace = namespace
	return json.Marshal(&loaded)
}

// encodeShoot is the create request's body for s: a shoot to be loaded as
// being deleted carries Gardener's finalizer, so that deleting it leaves it
// in place with a deletionTimestamp. s itself is left as generated.
func encodeShoot(s *Shoot) ([]byte, error) {
	if !s.Deleting {
		return json.Marshal(s.Object)
	}
	loaded := *s.Object
	loaded.Finalizers = append(slices.Clip(loaded.Finalizers), gardenerFinalizer)
	return json.Marshal(&loaded)
}

// encodeAdmittedShoot is encodeShoot for the real gardener-apiserver: the
// create request's body, which admission accepts, and the status as a merge
// patch of the status subresource. See LoadGardenerAPIServer for what
// differs from the generated shoot. s itself is left as generated.
func encodeAdmittedShoot(s *Shoot, namespace string) (create, status []byte, err error) {
	if create, err = json.Marshal(admittedShoot(s, namespace)); err != nil {
		return nil, nil, err
	}
	status, err = json.Marshal(map[string]any{"status": s.Object.Status})
	return create, status, err
}

// admittedShoot is the shoot as LoadGardenerAPIServer creates it in
// namespace, without its status; s itself is left as generated.
func admittedShoot(s *Shoot, namespace string) *gardencorev1beta1.Shoot {
	loaded := *s.Object
	loaded.Status = gardencorev1beta1.ShootStatus{}
	loaded.Spec.SeedName = nil
	loaded.Spec.Kubernetes = withoutOIDCConfig(loaded.Spec.Kubernetes)
	loaded.Spec.Resources = nil
	loaded.Spec.DNS = withNamespacedDomain(loaded.Spec.DNS, namespace)
	return &loaded
}

// withNamespacedDomain puts the namespace into the shoot's domain: Gardener
// wants every domain unique across the landscape, and worlds of one bed
// load shoots of the same names into different namespaces.
func withNamespacedDomain(dns *gardencorev1beta1.DNS, namespace string) *gardencorev1beta1.DNS {
	if dns == nil || dns.Domain == nil {
		return dns
	}
	loaded := *dns
	domain := namespace + "." + *dns.Domain
	loaded.Domain = &domain
	return &loaded
}

// withoutOIDCConfig drops kubeAPIServer.oidcConfig, which Gardener refuses
// from Kubernetes 1.32 on (OIDC then comes from the shoot-oidc-service
// extension, which the generated shoots also name).
func withoutOIDCConfig(k gardencorev1beta1.Kubernetes) gardencorev1beta1.Kubernetes {
	if k.KubeAPIServer == nil {
		return k
	}
	apiServer := *k.KubeAPIServer
	apiServer.OIDCConfig = nil
	k.KubeAPIServer = &apiServer
	return k
}
