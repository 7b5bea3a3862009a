package hap

import "sort"

// Usage is what one binding name holds, from both sides: the shoots that
// reference it in Gardener and the active instances that name it in KEB's
// database. A name can be in use without a binding existing.
type Usage struct {
	Name string
	// Binding is nil when Gardener has no binding of that name.
	Binding *Binding
	Shoots  int
	// CredentialsShoots of Shoots name the binding in
	// spec.credentialsBindingName: what KEB's shared-pool pick counts.
	CredentialsShoots int
	// Deleting of Shoots carry a deletion timestamp.
	Deleting int
	// Instances per owning GA, and their sum.
	InstancesByGA map[string]int
	Instances     int
	// ShootOwners counts shoots per GA that owns their runtime ID in KEB's
	// database; shoots whose runtime ID is unknown are not counted here.
	ShootOwners map[string]int
}

// Effective is the count ranking and limits use: the larger of the two sides,
// so a cluster one side does not know yet still takes its place.
func (u *Usage) Effective() int { return max(u.Instances, u.Shoots) }

// OwnInstances is what KEB counts for the GA's choice
// (GetInstanceCountPerBinding): the binding's active instances owned by that
// GA alone.
func (u *Usage) OwnInstances(ga string) int { return u.InstancesByGA[ga] }

// Empty reports whether nothing on either side references the name.
func (u *Usage) Empty() bool { return u.Shoots == 0 && u.Instances == 0 }

// Tally is a Snapshot indexed by binding name.
type Tally struct {
	byName map[string]*Usage
	// Names of every binding, referenced or not, sorted.
	names []string
	// ShootsTotal, InstancesTotal: assigned clusters on each side.
	ShootsTotal    int
	InstancesTotal int
	// Unassigned counts active instances with no binding yet.
	Unassigned int
	// ShootsWithoutBinding counts shoots that name no binding at all.
	ShootsWithoutBinding int
}

// NewTally indexes a snapshot. It is the only pass over the shoots a run
// makes after gathering.
func NewTally(s Snapshot) *Tally {
	t := &Tally{byName: make(map[string]*Usage, len(s.Bindings))}
	for i := range s.Bindings {
		t.use(s.Bindings[i].Name).Binding = &s.Bindings[i]
	}
	runtimeOwner := make(map[string]string)
	for _, ic := range s.Instances {
		if ic.BindingName == "" {
			t.Unassigned += ic.Active
			continue
		}
		u := t.use(ic.BindingName)
		if u.InstancesByGA == nil {
			u.InstancesByGA = make(map[string]int, 1)
		}
		u.InstancesByGA[ic.GlobalAccountID] += ic.Active
		u.Instances += ic.Active
		t.InstancesTotal += ic.Active
		for _, id := range ic.RuntimeIDs {
			if id != "" {
				runtimeOwner[id] = ic.GlobalAccountID
			}
		}
	}
	for _, sh := range s.Shoots {
		if sh.BindingName == "" {
			t.ShootsWithoutBinding++
			continue
		}
		u := t.use(sh.BindingName)
		u.Shoots++
		t.ShootsTotal++
		if !sh.ViaSecretBinding {
			u.CredentialsShoots++
		}
		if sh.Deleting {
			u.Deleting++
		}
		if owner, ok := runtimeOwner[sh.RuntimeID]; ok && sh.RuntimeID != "" {
			if u.ShootOwners == nil {
				u.ShootOwners = make(map[string]int, 1)
			}
			u.ShootOwners[owner]++
		}
	}
	t.names = make([]string, 0, len(t.byName))
	for name := range t.byName {
		t.names = append(t.names, name)
	}
	sort.Strings(t.names)
	return t
}

func (t *Tally) use(name string) *Usage {
	u, ok := t.byName[name]
	if !ok {
		u = &Usage{Name: name}
		t.byName[name] = u
	}
	return u
}

// Usage returns what the name holds; a name nothing references and no
// binding carries gets an empty Usage.
func (t *Tally) Usage(name string) *Usage {
	if u, ok := t.byName[name]; ok {
		return u
	}
	return &Usage{Name: name}
}

// Each calls fn for every binding name, existing or only referenced, in name
// order, so decisions come out in a stable order.
func (t *Tally) Each(fn func(*Usage)) {
	for _, name := range t.names {
		fn(t.byName[name])
	}
}
