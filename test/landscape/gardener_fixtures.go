package landscape

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The objects below are what gardener-apiserver's admission looks up before
// it admits a landscape's bindings and shoots; the CRD bed needs none of
// them.

// dnsSecretName is the Secret every admitted shoot of a namespace names as
// its DNS provider's credentials; admission only checks that it exists.
const dnsSecretName = "route53-secret"

const (
	projectNamePrefix  = "p"
	projectHashLetters = 6
)

// projectName names the Project owning namespace. Gardener allows project
// name plus shoot name 21 characters at most; the seven characters here leave
// 14 for shoots (KEB's are 9, c-xxxxxxx).
func projectName(namespace string) string {
	sum := sha256.Sum256([]byte(namespace))
	return projectNamePrefix + hex.EncodeToString(sum[:])[:projectHashLetters]
}

func project(namespace string) *gardencorev1beta1.Project {
	return &gardencorev1beta1.Project{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Project"},
		ObjectMeta: metav1.ObjectMeta{Name: projectName(namespace)},
		Spec: gardencorev1beta1.ProjectSpec{
			Namespace:   ptr(namespace),
			Description: ptr("Kyma runtimes of a generated test landscape"),
			Purpose:     ptr("kyma"),
			// KEB's shoots tolerate the taint of Kyma's dedicated seeds;
			// a project must allow each toleration its shoots carry.
			Tolerations: &gardencorev1beta1.ProjectTolerations{Whitelist: []gardencorev1beta1.Toleration{{Key: shootToleration}}},
		},
	}
}

// cloudProfile is the CloudProfile named after providerType that the
// landscape's shoots of that provider name: every machine type, zone and
// volume type the generator uses, the one Kubernetes version and the one
// machine image. It depends on the provider type alone, so worlds sharing
// an API server share it.
func cloudProfile(providerType string) *gardencorev1beta1.CloudProfile {
	shape := shapeFor(providerType)
	spec := gardencorev1beta1.CloudProfileSpec{
		Type:       providerType,
		Kubernetes: gardencorev1beta1.KubernetesSettings{Versions: []gardencorev1beta1.ExpirableVersion{{Version: kubernetesVersion}}},
		MachineImages: []gardencorev1beta1.MachineImage{{
			Name: "gardenlinux",
			Versions: []gardencorev1beta1.MachineImageVersion{{
				ExpirableVersion: gardencorev1beta1.ExpirableVersion{Version: gardenLinux},
				CRI:              []gardencorev1beta1.CRI{{Name: gardencorev1beta1.CRINameContainerD}},
				Architectures:    []string{"amd64"},
			}},
		}},
	}
	for _, name := range shape.machineTypes {
		spec.MachineTypes = append(spec.MachineTypes, gardencorev1beta1.MachineType{
			Name: name, CPU: resource.MustParse("4"), GPU: resource.MustParse("0"), Memory: resource.MustParse("16Gi"),
			Usable: ptr(true), Architecture: ptr("amd64"),
		})
	}
	if shape.volumeType != "" {
		spec.VolumeTypes = []gardencorev1beta1.VolumeType{{Name: shape.volumeType, Class: "standard", Usable: ptr(true)}}
	}
	for _, region := range poolRegions() {
		// Every region offers EU access: the EU-access pools' shoots
		// restrict themselves to it.
		r := gardencorev1beta1.Region{Name: region, AccessRestrictions: []gardencorev1beta1.AccessRestriction{{Name: "eu-access-only"}}}
		for _, z := range shape.zones(region) {
			r.Zones = append(r.Zones, gardencorev1beta1.AvailabilityZone{Name: z})
		}
		spec.Regions = append(spec.Regions, r)
	}
	return &gardencorev1beta1.CloudProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
		ObjectMeta: metav1.ObjectMeta{Name: providerType},
		Spec:       spec,
	}
}

// poolRegions are the regions of every pool, in a fixed order: a shoot's
// region comes from its pool, or Pools[0]'s for a pool a test made up.
func poolRegions() []string {
	var regions []string
	for _, p := range Pools {
		if !slices.Contains(regions, p.Region) {
			regions = append(regions, p.Region)
		}
	}
	return regions
}

// providerSecret is a hyperscaler account's credentials, the Secret a
// binding references. The content is a placeholder: nothing reads it.
func providerSecret(name string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{"credentials": "placeholder"},
	}
}

// secretBinding is the legacy binding a shoot naming spec.secretBindingName
// points at, beside the CredentialsBinding of the same name and account.
func secretBinding(name, namespace, providerType string) *gardencorev1beta1.SecretBinding {
	return &gardencorev1beta1.SecretBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "SecretBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		SecretRef:  corev1.SecretReference{Name: name, Namespace: namespace},
		Provider:   &gardencorev1beta1.SecretBindingProvider{Type: providerType},
	}
}

// ghostBinding is a stand-in for a binding a shoot names but the landscape
// lacks: created so admission takes the shoot, then deleted, as a binding
// whose finalizer was removed by hand is gone from under its shoots. Its
// Secret's namespace is the project's, set when it is loaded.
func ghostBinding(name, providerType string) *securityv1alpha1.CredentialsBinding {
	return &securityv1alpha1.CredentialsBinding{
		TypeMeta:       metav1.TypeMeta{APIVersion: "security.gardener.cloud/v1alpha1", Kind: "CredentialsBinding"},
		ObjectMeta:     metav1.ObjectMeta{Name: name},
		CredentialsRef: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: name},
		Provider:       securityv1alpha1.CredentialsBindingProvider{Type: providerType},
	}
}
