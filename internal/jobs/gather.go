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
	f := &Facts{SnapshotAt: snapshotAt, Policy: r.policy, Rules: r.rules}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		start := r.now()
		err := r.gardener.ListBindings(ctx, func() {
			f.Bindings, f.Skipped = f.Bindings[:0], f.Skipped[:0]
		}, func(b hap.Binding) error {
			f.Bindings = append(f.Bindings, b)
			return nil
		}, func(s hap.Skipped) {
			r.log.Warn("skipping credentials binding", zap.String("binding", s.Name), zap.String("reason", s.Reason))
			f.Skipped = append(f.Skipped, s)
		})
		f.Phases.ListBindings = r.now().Sub(start)
		if err != nil {
			return fmt.Errorf("listing credentials bindings: %w", err)
		}
		return nil
	})
	var instances []hap.InstanceCount
	instanceGroups := 0
	instancesRead := make(chan struct{})
	g.Go(func() error {
		start := r.now()
		read, err := r.store.ReadInstanceCounts(ctx)
		f.Phases.ReadDatabase = r.now().Sub(start)
		if err != nil {
			return fmt.Errorf("reading instance counts from KEB's database: %w", err)
		}
		instances, f.Absorbed = read.Counts, read.Absorbed
		instanceGroups = len(instances)
		close(instancesRead)
		return nil
	})
	var counter *hap.ShootCounter
	var shootsWithoutBinding []string
	g.Go(func() error {
		start := r.now()
		err := r.gardener.ListShoots(ctx, func() {
			if counter != nil {
				counter.ResetShoots()
			}
			shootsWithoutBinding = shootsWithoutBinding[:0]
		}, func(s hap.Shoot) error {
			if counter == nil {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-instancesRead:
				}
				// The counter holds all that shoots are matched
				// against: the rows and their runtime IDs are let
				// go now rather than after the list, megabytes at
				// 100,000 instances. A list that starts over resets
				// the counter's shoots, so it needs them no more.
				counter, instances = hap.NewShootCounter(instances), nil
			}
			if s.BindingName == "" {
				shootsWithoutBinding = append(shootsWithoutBinding, s.Name)
			}
			counter.Add(s)
			return nil
		})
		f.Phases.ListShoots = r.now().Sub(start)
		if err != nil {
			return fmt.Errorf("listing shoots: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if counter == nil { // no shoots at all
		counter = hap.NewShootCounter(instances)
	}
	for _, name := range shootsWithoutBinding {
		r.log.Warn("shoot names no credentials binding", zap.String("shoot", name))
		f.Skipped = append(f.Skipped, hap.Skipped{Kind: "Shoot", Name: name,
			Reason: "neither spec.credentialsBindingName nor spec.secretBindingName is set"})
	}
	f.Tally = counter.Tally(f.Bindings)
	r.log.Info("gathered the fleet",
		zap.Int("bindings", len(f.Bindings)),
		zap.Int("shoots", f.Tally.ShootsTotal+f.Tally.ShootsWithoutBinding),
		zap.Int("instanceGroups", instanceGroups),
		zap.Int("skipped", len(f.Skipped)),
		zap.Duration("listBindings", f.Phases.ListBindings),
		zap.Duration("listShoots", f.Phases.ListShoots),
		zap.Duration("readDatabase", f.Phases.ReadDatabase))
	return f, nil
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
