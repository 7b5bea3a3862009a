package landscape

import (
	"fmt"
	"strings"

	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// BindingSpec says what binding to plant. Zero values mean "not set".
type BindingSpec struct {
	// Name defaults to the pool's next free name, e.g. aws-eu-0007.
	Name string
	Pool hap.Pool
	// GlobalAccountID claims the binding (label tenantName).
	GlobalAccountID string
	Shared          bool
	Dirty           bool
	Internal        bool
	// Labels are set last and win, e.g. to plant a malformed label.
	Labels map[string]string
}

// AddBinding plants a binding and returns it.
func (l *Landscape) AddBinding(spec BindingSpec) *securityv1alpha1.CredentialsBinding {
	profile := profileOrGuess(spec.Pool)
	name := spec.Name
	if name == "" {
		name = l.nextBindingName(profile)
	}
	l.names[name] = true
	labels := map[string]string{hap.LabelHyperscalerType: spec.Pool.HyperscalerType}
	setFlag := func(key string, on bool) {
		if on {
			labels[key] = "true"
		}
	}
	setFlag(hap.LabelEUAccess, spec.Pool.EUAccess)
	setFlag(hap.LabelShared, spec.Shared)
	setFlag(hap.LabelDirty, spec.Dirty)
	setFlag(hap.LabelInternal, spec.Internal)
	if spec.GlobalAccountID != "" {
		labels[hap.LabelTenantName] = spec.GlobalAccountID
	}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	created := l.rng.before(epoch, 3*365*day)
	b := &securityv1alpha1.CredentialsBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: "security.gardener.cloud/v1alpha1", Kind: "CredentialsBinding"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Labels:            labels,
			CreationTimestamp: metav1.NewTime(created),
		},
		Provider: securityv1alpha1.CredentialsBindingProvider{Type: profile.ProviderType},
		// The namespace of the referenced secret is the project's; it is
		// filled in when the landscape is loaded.
		CredentialsRef: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: name},
	}
	l.Bindings = append(l.Bindings, b)
	return b
}

// ShootSpec says what shoot to plant. Zero values mean "not set".
type ShootSpec struct {
	// Name defaults to a random KEB-style name, c-xxxxxxx.
	Name string
	// BindingName empty plants a workerless shoot, the one kind that names
	// no binding.
	BindingName string
	// Legacy shoots name their binding in spec.secretBindingName.
	Legacy bool
	// RuntimeID empty means the shoot has no runtime-id label, as a shoot
	// created outside KEB.
	RuntimeID       string
	GlobalAccountID string
	SubAccountID    string
	// Pool decides the provider-specific shape; zero means aws.
	Pool     hap.Pool
	Deleting bool
}

// AddShoot plants a production-sized shoot and returns it.
func (l *Landscape) AddShoot(spec ShootSpec) *Shoot {
	if spec.Pool.HyperscalerType == "" {
		spec.Pool = Pools[0].Pool
	}
	if spec.Name == "" {
		spec.Name = l.newShootName()
	}
	l.names[spec.Name] = true
	s := &Shoot{Object: l.shootObject(spec, profileOrGuess(spec.Pool)), Deleting: spec.Deleting}
	l.Shoots = append(l.Shoots, s)
	return s
}

// AddInstance plants one row of KEB's instances table.
func (l *Landscape) AddInstance(i Instance) *Instance {
	row := i
	l.Instances = append(l.Instances, &row)
	return &row
}

func (l *Landscape) nextBindingName(p PoolProfile) string {
	for {
		l.bindingNo[p.slug()]++
		name := fmt.Sprintf("%s-%04d", p.slug(), l.bindingNo[p.slug()])
		if !l.names[name] {
			return name
		}
	}
}

func (l *Landscape) newShootName() string {
	for {
		name := "c-" + l.rng.alnum(7)
		if !l.names[name] {
			return name
		}
	}
}

// profileOrGuess returns the profile of a known pool; a pool a test made up
// gets the provider named by the hyperscaler type's first part.
func profileOrGuess(pool hap.Pool) PoolProfile {
	if p, ok := profileFor(pool); ok {
		return p
	}
	provider := strings.SplitN(pool.HyperscalerType, "_", 2)[0]
	p := Pools[0]
	p.Pool = pool
	p.ProviderType = provider
	return p
}
