package hap

import "fmt"

// fleet builds snapshots for decision tests without any I/O.
type fleet struct{ s Snapshot }

var awsPool = Pool{HyperscalerType: "aws"}

func (f *fleet) binding(name, ga string, pool Pool, mutate ...func(*Binding)) *fleet {
	b := Binding{Name: name, GlobalAccountID: ga, Pool: pool, ProviderType: providerOfHyperscalerType(pool.HyperscalerType)}
	for _, m := range mutate {
		m(&b)
	}
	f.s.Bindings = append(f.s.Bindings, b)
	return f
}

// clusters adds n active instances of ga and n shoots (of runtimes of ga) on
// the binding.
func (f *fleet) clusters(binding, ga string, n int) *fleet {
	return f.instances(binding, ga, n).shoots(binding, ga, n)
}

func (f *fleet) instances(binding, ga string, n int) *fleet {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%s-%d", ga, binding, i)
	}
	f.s.Instances = append(f.s.Instances, InstanceCount{BindingName: binding, GlobalAccountID: ga, Active: n, RuntimeIDs: RuntimeIDsOf(ids...)})
	return f
}

func (f *fleet) shoots(binding, ga string, n int) *fleet {
	for i := 0; i < n; i++ {
		f.s.Shoots = append(f.s.Shoots, Shoot{
			Name:        fmt.Sprintf("shoot-%s-%d", binding, len(f.s.Shoots)),
			BindingName: binding,
			RuntimeID:   fmt.Sprintf("%s-%s-%d", ga, binding, i),
		})
	}
	return f
}

func (f *fleet) tally() *Tally { return NewTally(f.s) }

func shared(b *Binding)   { b.Shared = true }
func dirty(b *Binding)    { b.Dirty = true }
func internal(b *Binding) { b.Internal = true }

func limits(def int, perProvider map[string]int) Policy {
	return Policy{AllowAll: true, DefaultLimit: def, ProviderLimits: perProvider}
}
