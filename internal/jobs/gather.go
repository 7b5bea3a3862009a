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

// Gather reads Gardener and KEB's database at the same time. It returns an
// error, never a partial picture: a job must not decide on half a fleet.
//
// Shoots are counted as they arrive. Attributing a shoot to a GA takes the
// runtime IDs of KEB's instances, so counting waits for the database read,
// one query that is done long before the shoot list.
func (r *Runner) Gather(ctx context.Context) (*Facts, error) {
	rs, err := r.Config.RuleSet()
	if err != nil {
		return nil, err
	}
	// The database's clock before any list starts: a withdrawal or a row
	// KEB wrote before this moment shows in what the lists return.
	snapshotAt, err := r.Store.DatabaseTime(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the database's time: %w", err)
	}
	f := &Facts{SnapshotAt: snapshotAt, Policy: r.Config.Policy(), Rules: rs}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		start := r.Now()
		err := r.Gardener.ListBindings(ctx, func() {
			f.Bindings, f.Skipped = f.Bindings[:0], f.Skipped[:0]
		}, func(b hap.Binding) error {
			f.Bindings = append(f.Bindings, b)
			return nil
		}, func(s hap.Skipped) {
			r.Log.Warn("skipping credentials binding", zap.String("binding", s.Name), zap.String("reason", s.Reason))
			f.Skipped = append(f.Skipped, s)
		})
		f.Phases.ListBindings = r.Now().Sub(start)
		if err != nil {
			return fmt.Errorf("listing credentials bindings: %w", err)
		}
		return nil
	})
	var instances []hap.InstanceCount
	instancesRead := make(chan struct{})
	g.Go(func() error {
		start := r.Now()
		read, err := r.Store.ReadInstanceCounts(ctx)
		f.Phases.ReadDatabase = r.Now().Sub(start)
		if err != nil {
			return fmt.Errorf("reading instance counts from KEB's database: %w", err)
		}
		instances, f.Absorbed = read.Counts, read.Absorbed
		close(instancesRead)
		return nil
	})
	var counter *hap.ShootCounter
	var shootsWithoutBinding []string
	g.Go(func() error {
		start := r.Now()
		err := r.Gardener.ListShoots(ctx, func() {
			counter, shootsWithoutBinding = nil, shootsWithoutBinding[:0]
		}, func(s hap.Shoot) error {
			if counter == nil {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-instancesRead:
				}
				counter = hap.NewShootCounter(instances)
			}
			if s.BindingName == "" {
				shootsWithoutBinding = append(shootsWithoutBinding, s.Name)
			}
			counter.Add(s)
			return nil
		})
		f.Phases.ListShoots = r.Now().Sub(start)
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
		r.Log.Warn("shoot names no credentials binding", zap.String("shoot", name))
		f.Skipped = append(f.Skipped, hap.Skipped{Kind: "Shoot", Name: name,
			Reason: "neither spec.credentialsBindingName nor spec.secretBindingName is set"})
	}
	f.Tally = counter.Tally(f.Bindings)
	r.Log.Info("gathered the fleet",
		zap.Int("bindings", len(f.Bindings)),
		zap.Int("shoots", f.Tally.ShootsTotal+f.Tally.ShootsWithoutBinding),
		zap.Int("instanceGroups", len(instances)),
		zap.Int("skipped", len(f.Skipped)),
		zap.Duration("listBindings", f.Phases.ListBindings),
		zap.Duration("listShoots", f.Phases.ListShoots),
		zap.Duration("readDatabase", f.Phases.ReadDatabase))
	return f, nil
}

// Candidates ranks the snapshot once per run, for every job that needs it.
func (f *Facts) Candidates() []hap.Candidate {
	if f.candidates == nil {
		f.candidates = hap.DecideCandidates(f.Tally, f.Policy)
	}
	return f.candidates
}
