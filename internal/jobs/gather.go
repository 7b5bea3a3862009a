package jobs

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
)

// Facts is what one run gathered: Gardener's bindings, the shoots and KEB's
// instances counted per binding name, what the database read says about
// reservations, and KEB's settings every decision reads (its multi-account
// policy and its rules). Shoots and instances are not kept one by one: the
// tally holds all that decisions read of them.
type Facts struct {
	// SnapshotAt is the database's time just before the snapshot was read:
	// everything KEB did before it is in the snapshot.
	SnapshotAt time.Time
	Bindings   []hap.Binding
	Skipped    []hap.Skipped
	Tally      *hap.Tally
	Absorbed   []string
	Phases     Phases
	Policy     hap.Policy
	Rules      rules.RuleSet

	candidates []hap.Candidate
}

// Phases times each part of gathering, for logs and the benchmark.
type Phases struct {
	ListBindings time.Duration
	ListShoots   time.Duration
	ReadDatabase time.Duration
}

// gatherGardener is what gathering needs of the Gardener API. Lists page
// through the namespace and fail rather than return a partial picture.
type gatherGardener interface {
	// ListBindings calls fn for every binding; skipped receives bindings
	// whose labels cannot be read. When the list had to start over (expired
	// continue token), onReset is called first and every binding is
	// delivered again from the beginning.
	ListBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) error
	// ListShoots calls fn for every shoot, with onReset as for ListBindings.
	ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error
}

// gatherStore is what gathering needs of the database.
type gatherStore interface {
	// DatabaseTime is the database's clock, the one KEB's rows, the
	// candidate table's age and withdrawals are timed by.
	DatabaseTime(ctx context.Context) (time.Time, error)
	ReadInstanceCounts(ctx context.Context) (hap.InstanceRead, error)
}

// gatherer reads one run's facts, with KEB's policy and rules.
type gatherer struct {
	gardener gatherGardener
	store    gatherStore
	log      *zap.Logger
	now      func() time.Time
	policy   hap.Policy
	rules    rules.RuleSet
}

// configureGather takes KEB's policy and rules; what it returns builds the
// gathering of a run on the run's ports.
func configureGather(keb KEB) func(Ports) *gatherer {
	return func(p Ports) *gatherer {
		return &gatherer{gardener: p.Gardener, store: p.Store, log: p.Log, now: p.Now, policy: keb.Policy, rules: keb.Rules}
	}
}

// gather reads Gardener and KEB's database at the same time. It returns an
// error, never a partial picture: a job must not decide on half a fleet.
// Each source returns its own result; the one thing they pass is KEB's
// instance counts, sent from the database read to the shoot count.
//
// Shoots are counted as they arrive. Attributing a shoot to a GA takes the
// runtime IDs of KEB's instances, so counting waits for the database read,
// one query that is done long before the shoot list.
func (r *gatherer) gather(ctx context.Context) (*Facts, error) {
	// The database's clock before any list starts: a withdrawal or a row
	// KEB wrote before this moment shows in what the lists return.
	snapshotAt, err := r.store.DatabaseTime(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the database's time: %w", err)
	}
	counts := make(chan []hap.InstanceCount, 1)
	var bindings bindingsRead
	var database databaseRead
	var shoots shootsRead
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { bindings, err = r.listBindings(gctx); return err })
	g.Go(func() (err error) { database, err = r.readDatabase(gctx, counts); return err })
	g.Go(func() (err error) { shoots, err = r.countShoots(gctx, counts); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	counter := shoots.counter
	if counter == nil { // no shoots at all: the counts were never taken
		counter = hap.NewShootCounter(<-counts)
	}
	f := &Facts{SnapshotAt: snapshotAt, Policy: r.policy, Rules: r.rules,
		Bindings: bindings.bindings, Skipped: bindings.skipped, Absorbed: database.absorbed,
		Phases: Phases{ListBindings: bindings.took, ListShoots: shoots.took, ReadDatabase: database.took}}
	for _, name := range shoots.withoutBinding {
		r.log.Warn("shoot names no credentials binding", zap.String("shoot", name))
		f.Skipped = append(f.Skipped, hap.Skipped{Kind: "Shoot", Name: name,
			Reason: "neither spec.credentialsBindingName nor spec.secretBindingName is set"})
	}
	f.Tally = counter.Tally(f.Bindings)
	r.log.Info("gathered the fleet",
		zap.Int("bindings", len(f.Bindings)),
		zap.Int("shoots", f.Tally.ShootsTotal+f.Tally.ShootsWithoutBinding),
		zap.Int("instanceGroups", database.groups),
		zap.Int("skipped", len(f.Skipped)),
		zap.Duration("listBindings", f.Phases.ListBindings),
		zap.Duration("listShoots", f.Phases.ListShoots),
		zap.Duration("readDatabase", f.Phases.ReadDatabase))
	return f, nil
}

// bindingsRead is the binding list's result.
type bindingsRead struct {
	bindings []hap.Binding
	skipped  []hap.Skipped
	took     time.Duration
}

// listBindings lists every binding; a list that starts over starts its
// result over.
func (r *gatherer) listBindings(ctx context.Context) (bindingsRead, error) {
	start := r.now()
	var out bindingsRead
	err := r.gardener.ListBindings(ctx, func() {
		out.bindings, out.skipped = out.bindings[:0], out.skipped[:0]
	}, func(b hap.Binding) error {
		out.bindings = append(out.bindings, b)
		return nil
	}, func(s hap.Skipped) {
		r.log.Warn("skipping credentials binding", zap.String("binding", s.Name), zap.String("reason", s.Reason))
		out.skipped = append(out.skipped, s)
	})
	out.took = r.now().Sub(start)
	if err != nil {
		return bindingsRead{}, fmt.Errorf("listing credentials bindings: %w", err)
	}
	return out, nil
}

// databaseRead is the database read's result but the counts, which go to
// the shoot count: it holds them alone, so that they are let go as soon
// as it has built its counter.
type databaseRead struct {
	absorbed []string
	groups   int
	took     time.Duration
}

// readDatabase reads KEB's instance counts and sends them on counts.
func (r *gatherer) readDatabase(ctx context.Context, counts chan<- []hap.InstanceCount) (databaseRead, error) {
	start := r.now()
	read, err := r.store.ReadInstanceCounts(ctx)
	took := r.now().Sub(start)
	if err != nil {
		return databaseRead{}, fmt.Errorf("reading instance counts from KEB's database: %w", err)
	}
	counts <- read.Counts
	return databaseRead{absorbed: read.Absorbed, groups: len(read.Counts), took: took}, nil
}

// shootsRead is the shoot list's result: the shoots counted against KEB's
// instances (nil when there were none), and those naming no binding.
type shootsRead struct {
	counter        *hap.ShootCounter
	withoutBinding []string
	took           time.Duration
}

// countShoots lists every shoot and counts it, taking KEB's instance
// counts from counts at the first shoot; a list that starts over resets
// the counter's shoots.
func (r *gatherer) countShoots(ctx context.Context, counts <-chan []hap.InstanceCount) (shootsRead, error) {
	start := r.now()
	var out shootsRead
	err := r.gardener.ListShoots(ctx, func() {
		if out.counter != nil {
			out.counter.ResetShoots()
		}
		out.withoutBinding = out.withoutBinding[:0]
	}, func(s hap.Shoot) error {
		if out.counter == nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case c := <-counts:
				out.counter = hap.NewShootCounter(c)
			}
		}
		if s.BindingName == "" {
			out.withoutBinding = append(out.withoutBinding, s.Name)
		}
		out.counter.Add(s)
		return nil
	})
	out.took = r.now().Sub(start)
	if err != nil {
		return shootsRead{}, fmt.Errorf("listing shoots: %w", err)
	}
	return out, nil
}

// Findings decides the snapshot's drift findings (hap.Findings).
func (f *Facts) Findings() []hap.Finding {
	return hap.Findings(f.Tally, f.Policy, f.Candidates(), f.Bindings, f.Rules)
}

// Candidates ranks the snapshot once per run, for every job that needs it.
func (f *Facts) Candidates() []hap.Candidate {
	if f.candidates == nil {
		f.candidates = hap.DecideCandidates(f.Tally, f.Policy)
	}
	return f.candidates
}
