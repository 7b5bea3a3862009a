package landscape

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// The default landscape agrees with itself, so drift a test plants is the
// only drift there is; and it holds every case the job must handle.
func TestGeneratedLandscapeAgreesWithItselfAndCoversEveryCase(t *testing.T) {
	l := Generate(Options{Seed: 5, GlobalAccounts: 40})
	bindings := map[string]hap.Binding{}
	for _, b := range l.ExpectedBindings() {
		bindings[b.Name] = b
	}
	if len(bindings) != len(l.Bindings) {
		t.Fatalf("%d of %d generated bindings have labels hap refuses", len(l.Bindings)-len(bindings), len(l.Bindings))
	}
	activeByRuntime := map[string]*Instance{}
	for _, i := range l.Instances {
		if i.Active() {
			activeByRuntime[i.RuntimeID] = i
		}
	}
	seen := map[string]int{}
	perGAPool := map[[2]string]map[string]bool{}
	for _, s := range l.ExpectedShoots() {
		b, ok := bindings[s.BindingName]
		if !ok {
			t.Fatalf("shoot %s references binding %q that does not exist", s.Name, s.BindingName)
		}
		inst := activeByRuntime[s.RuntimeID]
		if inst == nil || inst.SubscriptionSecretName != s.BindingName {
			t.Fatalf("shoot %s (runtime %s) has no active instance on binding %s", s.Name, s.RuntimeID, s.BindingName)
		}
		switch {
		case b.Shared:
			seen["on shared binding"]++
		case b.GlobalAccountID != inst.OwnerGlobalAccountID():
			t.Fatalf("shoot %s of GA %s runs on binding %s claimed by %s", s.Name, inst.OwnerGlobalAccountID(), b.Name, b.GlobalAccountID)
		case b.Dirty || !b.Claimed():
			t.Fatalf("shoot %s runs on free or dirty binding %s", s.Name, b.Name)
		}
		key := [2]string{b.GlobalAccountID, b.Pool.String()}
		if perGAPool[key] == nil {
			perGAPool[key] = map[string]bool{}
		}
		perGAPool[key][b.Name] = true
		if s.Deleting {
			seen["deleting shoot"]++
		}
		if l.shoot(s.Name).Spec.SecretBindingName != nil {
			seen["legacy shoot"]++
		}
	}
	for key, names := range perGAPool {
		if key[0] != "" && len(names) > 1 {
			seen["GA spread over bindings of one pool"]++
		}
	}
	for _, b := range bindings {
		switch {
		case b.Dirty:
			seen["dirty binding"]++
		case b.Internal:
			seen["internal binding"]++
		case !b.Claimed() && !b.Shared:
			seen["free binding"]++
		}
		if b.Pool.EUAccess {
			seen["EU access binding"]++
		}
	}
	for _, i := range l.Instances {
		switch {
		case !i.Active():
			seen["deleted instance"]++
		case i.Suspended():
			seen["suspended instance"]++
		case i.SubscriptionSecretName == "":
			seen["unassigned instance"]++
		}
		if i.SubscriptionGlobalAccountID != "" {
			seen["instance on another GA's subscription"]++
		}
	}
	for _, c := range []string{"on shared binding", "deleting shoot", "legacy shoot", "GA spread over bindings of one pool",
		"dirty binding", "internal binding", "free binding", "EU access binding", "deleted instance", "suspended instance",
		"unassigned instance", "instance on another GA's subscription"} {
		if seen[c] == 0 {
			t.Errorf("the landscape has no %s", c)
		}
	}
}
