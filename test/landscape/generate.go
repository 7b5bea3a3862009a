package landscape

import (
	"time"
)

const day = 24 * time.Hour

// Options size a generated landscape. Zero values take the defaults.
type Options struct {
	Seed uint64
	// GlobalAccounts is the number of customers (default 10).
	GlobalAccounts int
	// ShootsPerGlobalAccount is the mean number of clusters a GA runs
	// (default 4).
	ShootsPerGlobalAccount int
	// FreeBindingsPerPool is the number of unclaimed bindings in each
	// non-shared pool (default 2).
	FreeBindingsPerPool int
}

func (o Options) withDefaults() Options {
	if o.GlobalAccounts <= 0 {
		o.GlobalAccounts = 10
	}
	if o.ShootsPerGlobalAccount <= 0 {
		o.ShootsPerGlobalAccount = 4
	}
	if o.FreeBindingsPerPool <= 0 {
		o.FreeBindingsPerPool = 2
	}
	return o
}

// New returns an empty landscape for a test to plant everything into; seed
// drives the generated parts of what it plants (shoot shapes, times).
func New(seed uint64) *Landscape {
	return &Landscape{Seed: seed, rng: newRandom(seed), names: map[string]bool{}, bindingNo: map[string]int{}}
}

// Generate builds a landscape in which everything agrees: every shoot has an
// active instance on the same binding, every claimed binding's shoots belong
// to its GA. Each pool also has free, dirty and internal bindings, the shared
// pool has shared ones, and KEB's table holds the history production has:
// deleted instances, suspended ones without a cluster, instances not yet
// assigned a binding and instances on another GA's subscription.
func Generate(opts Options) *Landscape {
	opts = opts.withDefaults()
	l := New(opts.Seed)
	r := l.rng
	for range opts.GlobalAccounts {
		l.GlobalAccounts = append(l.GlobalAccounts, r.uuid())
	}
	var dedicated, shared []PoolProfile
	for _, p := range Pools {
		if p.Shared {
			shared = append(shared, p)
		} else {
			dedicated = append(dedicated, p)
		}
	}
	for _, p := range dedicated {
		for range opts.FreeBindingsPerPool {
			l.AddBinding(BindingSpec{Pool: p.Pool})
		}
		// Released by a GA that left, waiting for the account cleanup.
		l.AddBinding(BindingSpec{Pool: p.Pool, GlobalAccountID: r.uuid(), Dirty: true})
	}
	var sharedBindings []string
	for _, p := range shared {
		for range 2 {
			sharedBindings = append(sharedBindings, l.AddBinding(BindingSpec{Pool: p.Pool, Shared: true}).Name)
		}
	}
	for _, ga := range l.GlobalAccounts {
		l.generateGlobalAccount(ga, opts.ShootsPerGlobalAccount, dedicated, shared, sharedBindings)
	}
	return l
}

func (l *Landscape) generateGlobalAccount(ga string, meanShoots int, dedicated, shared []PoolProfile, sharedBindings []string) {
	r := l.rng
	used := []PoolProfile{l.primaryPool(dedicated)}
	if r.chance(0.3) {
		if second := pick(r, dedicated); second.Pool != used[0].Pool {
			used = append(used, second)
		}
	}
	var firstBinding string
	for _, p := range used {
		bindings := l.claimBindings(ga, p)
		if firstBinding == "" {
			firstBinding = bindings[0]
		}
		for range r.between(1, 2*meanShoots/len(used)+1) {
			// Most clusters sit in the first binding, as selecting the
			// most populated binding below the limit fills it first.
			b := bindings[0]
			if !r.chance(0.6) {
				b = pick(r, bindings)
			}
			l.addCluster(ga, b, p)
		}
	}
	if len(shared) > 0 && r.chance(0.25) {
		p := pick(r, shared)
		for range r.between(1, 2) {
			l.addCluster(ga, pick(r, sharedBindings), p)
		}
	}
	if r.chance(0.15) {
		// Suspended: KEB deprovisioned the cluster but keeps the instance.
		l.AddInstance(l.newInstance(ga, firstBinding, used[0], false))
	}
	if r.chance(0.1) {
		// Provisioning has not picked a binding yet.
		l.AddInstance(l.newInstance(ga, "", used[0], true))
	}
}

// primaryPool weighs pools as production does: most GAs run on AWS.
func (l *Landscape) primaryPool(dedicated []PoolProfile) PoolProfile {
	if l.rng.chance(0.55) {
		return dedicated[0]
	}
	return pick(l.rng, dedicated)
}

// claimBindings claims one binding for ga in pool p, sometimes several (a GA
// grown past the per-binding limit), and now and then one reserved as
// internal.
func (l *Landscape) claimBindings(ga string, p PoolProfile) []string {
	r := l.rng
	n := 1
	switch x := r.Float64(); {
	case x < 0.1:
		n = 3
	case x < 0.3:
		n = 2
	}
	names := make([]string, 0, n)
	for range n {
		names = append(names, l.AddBinding(BindingSpec{Pool: p.Pool, GlobalAccountID: ga, Internal: r.chance(0.05)}).Name)
	}
	return names
}

// addCluster plants one running cluster of ga on binding: its shoot, its
// active instance, and the deleted instances that ran there before.
func (l *Landscape) addCluster(ga, binding string, p PoolProfile) {
	r := l.rng
	inst := l.newInstance(ga, binding, p, true)
	if !p.Shared && r.chance(0.1) {
		// The instance belongs to another GA that runs on ga's account.
		inst.SubscriptionGlobalAccountID = ga
		inst.GlobalAccountID = r.uuid()
	}
	l.AddShoot(ShootSpec{
		BindingName:     binding,
		Legacy:          r.chance(0.05),
		RuntimeID:       inst.RuntimeID,
		GlobalAccountID: inst.GlobalAccountID,
		SubAccountID:    inst.SubAccountID,
		Pool:            p.Pool,
		Deleting:        r.chance(0.03),
	})
	l.AddInstance(inst)
	for range r.IntN(3) {
		old := l.newInstance(ga, binding, p, true)
		old.DeletedAt = r.after(old.CreatedAt, 90*day)
		old.UpdatedAt = old.DeletedAt
		l.AddInstance(old)
	}
}
