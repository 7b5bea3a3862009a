package gardener

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Only what a decision reads makes a change: a new resourceVersion alone
// (a shoot's status moving on) does not.
func TestOnlyDecisionFieldsMakeAChange(t *testing.T) {
	shoot := func(rv, binding string) *cachedShoot {
		s := &cachedShoot{shoot: hap.Shoot{Name: "s", BindingName: binding}}
		s.ResourceVersion = rv
		return s
	}
	binding := func(rv string, labels map[string]string) *cachedBinding {
		b := &cachedBinding{binding: hap.Binding{Name: "b", ResourceVersion: rv, Labels: hap.LabelsOf(labels), GlobalAccountID: labels[hap.LabelTenantName]}}
		b.ResourceVersion = rv
		return b
	}
	ga := map[string]string{hap.LabelTenantName: "ga"}
	tests := []struct {
		name string
		a, b any
		same bool
	}{
		{"shoot status only", shoot("1", "aws-1"), shoot("2", "aws-1"), true},
		{"shoot moved binding", shoot("1", "aws-1"), shoot("2", "aws-2"), false},
		{"binding resourceVersion only", binding("1", ga), binding("2", map[string]string{hap.LabelTenantName: "ga"}), true},
		{"binding claimed by another GA", binding("1", ga), binding("2", map[string]string{hap.LabelTenantName: "other"}), false},
		{"binding got a label", binding("1", ga), binding("2", map[string]string{hap.LabelTenantName: "ga", hap.LabelDirty: "true"}), false},
		{"different kinds", shoot("1", "b"), binding("1", ga), false},
	}
	for _, tc := range tests {
		if got := sameDecisionFields(tc.a, tc.b); got != tc.same {
			t.Errorf("%s: same = %v, want %v", tc.name, got, tc.same)
		}
	}
}
