// Package landscape generates a Gardener project and KEB's instances table as
// production has them, deterministically from a seed, and loads them into
// the test bed. The Landscape value is the truth tests check results against;
// tests plant what a scenario needs with the Add methods before loading.
package landscape

import (
	"sort"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Landscape is one generated Gardener project plus KEB's instance rows.
type Landscape struct {
	Seed           uint64
	GlobalAccounts []string
	Bindings       []*securityv1alpha1.CredentialsBinding
	Shoots         []*Shoot
	Instances      []*Instance

	rng       *random
	names     map[string]bool // shoot and binding names taken
	bindingNo map[string]int  // last number used per pool slug
}

// Shoot is a generated shoot and whether it is loaded as being deleted.
type Shoot struct {
	Object *gardencorev1beta1.Shoot
	// Deleting shoots are created with a finalizer and then deleted, so they
	// stay in Gardener with a deletionTimestamp.
	Deleting bool
}

// Instance is one row of KEB's instances table.
type Instance struct {
	InstanceID                  string
	RuntimeID                   string
	GlobalAccountID             string
	SubscriptionGlobalAccountID string
	SubAccountID                string
	SubscriptionSecretName      string
	Provider                    string
	ProviderRegion              string
	ServicePlanName             string
	ProvisioningParameters      string
	CreatedAt                   time.Time
	UpdatedAt                   time.Time
	// DeletedAt is the zero time.Time for an active instance, as KEB's
	// column default 0001-01-01 00:00:00+00 is.
	DeletedAt time.Time
	ExpiredAt *time.Time
}

// Active reports whether KEB counts the instance as existing.
func (i *Instance) Active() bool { return i.DeletedAt.IsZero() }

// OwnerGlobalAccountID is the GA whose hyperscaler account the instance uses.
func (i *Instance) OwnerGlobalAccountID() string {
	if i.SubscriptionGlobalAccountID != "" {
		return i.SubscriptionGlobalAccountID
	}
	return i.GlobalAccountID
}

// Suspended reports whether the instance's ERS context marks it inactive.
func (i *Instance) Suspended() bool {
	return strings.Contains(i.ProvisioningParameters, `"active":false`)
}

// ExpectedShoots is what listing the loaded landscape must return, by name.
func (l *Landscape) ExpectedShoots() []hap.Shoot {
	out := make([]hap.Shoot, 0, len(l.Shoots))
	for _, s := range l.Shoots {
		binding, viaSecret := "", false
		if s.Object.Spec.CredentialsBindingName != nil {
			binding = *s.Object.Spec.CredentialsBindingName
		} else if s.Object.Spec.SecretBindingName != nil {
			binding, viaSecret = *s.Object.Spec.SecretBindingName, *s.Object.Spec.SecretBindingName != ""
		}
		out = append(out, hap.Shoot{
			Name:             s.Object.Name,
			BindingName:      binding,
			ViaSecretBinding: viaSecret,
			Deleting:         s.Deleting,
			RuntimeID:        s.Object.Labels[hap.LabelRuntimeID],
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ExpectedBindings is what listing the loaded landscape must return, by name,
// without resource versions (the API server assigns them). Bindings whose
// labels hap refuses are left out, as a list skips them.
func (l *Landscape) ExpectedBindings() []hap.Binding {
	out := make([]hap.Binding, 0, len(l.Bindings))
	for _, b := range l.Bindings {
		hb, err := hap.BindingFromLabels(b.Name, b.Labels, b.Provider.Type, "")
		if err == nil {
			out = append(out, hb)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (l *Landscape) shoot(name string) *gardencorev1beta1.Shoot {
	for _, s := range l.Shoots {
		if s.Object.Name == name {
			return s.Object
		}
	}
	return nil
}

// Binding returns the binding called name, or nil.
func (l *Landscape) Binding(name string) *securityv1alpha1.CredentialsBinding {
	for _, b := range l.Bindings {
		if b.Name == name {
			return b
		}
	}
	return nil
}
