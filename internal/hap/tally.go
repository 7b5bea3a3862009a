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
	InstancesByGA GACounts
	Instances     int
	// ShootOwners counts shoots per GA that owns their runtime ID in KEB's
	// database; shoots whose runtime ID is unknown are not counted here.
	ShootOwners GACounts
}

// Effective is the count ranking and limits use: the larger of the two sides,
// so a cluster one side does not know yet still takes its place.
func (u *Usage) Effective() int { return max(u.Instances, u.Shoots) }

// OwnInstances is what KEB counts for the GA's choice
// (GetInstanceCountPerBinding): the binding's active instances owned by that
// GA alone.
func (u *Usage) OwnInstances(ga string) int { return u.InstancesByGA.Of(ga) }

// Empty reports whether nothing on either side references the name.
func (u *Usage) Empty() bool { return u.Shoots == 0 && u.Instances == 0 }

// GACount is a count of one global account's.
type GACount struct {
	GlobalAccountID string
	N               int
}

// GACounts counts per global account, in the order the accounts first came.
// Almost every binding is used by one account: a short slice holds that in
// a fraction of what a map takes, which at 30,000 bindings is megabytes.
type GACounts []GACount

// Of returns the count of ga, 0 when it has none.
func (c GACounts) Of(ga string) int {
	for _, e := range c {
		if e.GlobalAccountID == ga {
			return e.N
		}
	}
	return 0
}

// SortedGAs returns the accounts counted, in name order.
func (c GACounts) SortedGAs() []string {
	gas := make([]string, len(c))
	for i, e := range c {
		gas[i] = e.GlobalAccountID
	}
	sort.Strings(gas)
	return gas
}

func (c *GACounts) add(ga string, n int) {
	for i := range *c {
		if (*c)[i].GlobalAccountID == ga {
			(*c)[i].N += n
			return
		}
	}
	*c = append(*c, GACount{GlobalAccountID: ga, N: n})
}

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

// NewTally indexes a snapshot held whole.
func NewTally(s Snapshot) *Tally {
	c := NewShootCounter(s.Instances)
	for _, sh := range s.Shoots {
		c.Add(sh)
	}
	return c.Tally(s.Bindings)
}

// ShootCounter builds a Tally while the shoots are still being listed, so a
// run keeps counts per binding rather than every shoot: at 100,000 shoots
// that is the difference between megabytes and tens of them.
type ShootCounter struct {
	t *Tally
	// owners maps the runtime ID of each active instance to its owning
	// GA, an index into gas, to attribute shoots; both are dropped once
	// counting ends.
	owners runtimeIndex[int32]
	gas    []string
}

// NewShootCounter starts a tally from KEB's instance counts; shoots are
// then added one at a time. The instances' runtime IDs are indexed here, and
// the index is let go in Tally.
func NewShootCounter(instances []InstanceCount) *ShootCounter {
	c := &ShootCounter{t: &Tally{byName: make(map[string]*Usage, len(instances))}}
	t := c.t
	for _, ic := range instances {
		if ic.BindingName == "" {
			t.Unassigned += ic.Active
			continue
		}
		u := t.use(ic.BindingName)
		u.InstancesByGA.add(ic.GlobalAccountID, ic.Active)
		u.Instances += ic.Active
		t.InstancesTotal += ic.Active
		c.owners.put(ic.RuntimeIDs, int32(len(c.gas)))
		c.gas = append(c.gas, ic.GlobalAccountID)
	}
	return c
}

// Add counts one shoot.
func (c *ShootCounter) Add(sh Shoot) {
	t := c.t
	if sh.BindingName == "" {
		t.ShootsWithoutBinding++
		return
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
	if owner, ok := c.owners.get(sh.RuntimeID); ok {
		u.ShootOwners.add(c.gas[owner], 1)
	}
}

// ResetShoots forgets every shoot counted so far, for a list that starts
// over; the instances stay counted and indexed. The counter then reads as
// one NewShootCounter made from the same instances.
func (c *ShootCounter) ResetShoots() {
	t := c.t
	for name, u := range t.byName {
		if len(u.InstancesByGA) == 0 { // only shoots named it
			delete(t.byName, name)
			continue
		}
		u.Shoots, u.CredentialsShoots, u.Deleting, u.ShootOwners = 0, 0, 0, nil
	}
	t.ShootsTotal, t.ShootsWithoutBinding = 0, 0
}

// Tally completes the count with Gardener's bindings. The counter must not
// be used afterwards.
func (c *ShootCounter) Tally(bindings []Binding) *Tally {
	t := c.t
	*c = ShootCounter{}
	for i := range bindings {
		t.use(bindings[i].Name).Binding = &bindings[i]
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
