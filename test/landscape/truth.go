package landscape

import (
	"sort"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Snapshot is the landscape as the job must see it once loaded: what
// decisions computed from it must equal after a real run.
func (l *Landscape) Snapshot() hap.Snapshot {
	type key struct{ binding, ga string }
	counts := map[key]*hap.InstanceCount{}
	ids := map[key][]string{}
	for _, i := range l.Instances {
		if !i.Active() {
			continue
		}
		k := key{i.SubscriptionSecretName, i.OwnerGlobalAccountID()}
		c, ok := counts[k]
		if !ok {
			c = &hap.InstanceCount{BindingName: k.binding, GlobalAccountID: k.ga}
			counts[k] = c
		}
		c.Active++
		ids[k] = append(ids[k], i.RuntimeID)
	}
	s := hap.Snapshot{Bindings: l.ExpectedBindings(), Shoots: l.ExpectedShoots()}
	for k, c := range counts {
		sort.Strings(ids[k])
		c.RuntimeIDs = hap.RuntimeIDsOf(ids[k]...)
		s.Instances = append(s.Instances, *c)
	}
	sort.Slice(s.Instances, func(i, j int) bool {
		a, b := s.Instances[i], s.Instances[j]
		return a.BindingName < b.BindingName || (a.BindingName == b.BindingName && a.GlobalAccountID < b.GlobalAccountID)
	})
	return s
}
