package jobs

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/kyma-project/hap-reconciler/hap"
	"github.com/kyma-project/hap-reconciler/hap/rules"
)

// Facts is what one run gathered: the snapshot, indexed, plus what the
// database read says about reservations, and KEB's settings every decision
// reads (its multi-account policy and its rules).
type Facts struct {
	Snapshot hap.Snapshot
	Tally    *hap.Tally
	Absorbed []string
	Phases   Phases
	Policy   hap.Policy
	Rules    rules.RuleSet

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
func (r *Runner) Gather(ctx context.Context) (*Facts, error) {
	rs, err := r.Config.RuleSet()
	if err != nil {
		return nil, err
	}
	f := &Facts{Policy: r.Config.Policy(), Rules: rs}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		start := r.Now()
		err := r.Gardener.ListBindings(ctx, func() {
			f.Snapshot.Bindings, f.Snapshot.Skipped = f.Snapshot.Bindings[:0], f.Snapshot.Skipped[:0]
		}, func(b hap.Binding) error {
			f.Snapshot.Bindings = append(f.Snapshot.Bindings, b)
			return nil
		}, func(s hap.Skipped) {
			r.Log.Warn("skipping credentials binding", zap.String("binding", s.Name), zap.String("reason", s.Reason))
			f.Snapshot.Skipped = append(f.Snapshot.Skipped, s)
		})
		f.Phases.ListBindings = r.Now().Sub(start)
		if err != nil {
			return fmt.Errorf("listing credentials bindings: %w", err)
		}
		return nil
	})
	var shootsWithoutBinding []string
	g.Go(func() error {
		start := r.Now()
		err := r.Gardener.ListShoots(ctx, func() {
			f.Snapshot.Shoots = f.Snapshot.Shoots[:0]
			shootsWithoutBinding = shootsWithoutBinding[:0]
		}, func(s hap.Shoot) error {
			if s.BindingName == "" {
				shootsWithoutBinding = append(shootsWithoutBinding, s.Name)
			}
			f.Snapshot.Shoots = append(f.Snapshot.Shoots, s)
			return nil
		})
		f.Phases.ListShoots = r.Now().Sub(start)
		if err != nil {
			return fmt.Errorf("listing shoots: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		start := r.Now()
		read, err := r.Store.ReadInstanceCounts(ctx)
		f.Phases.ReadDatabase = r.Now().Sub(start)
		if err != nil {
			return fmt.Errorf("reading instance counts from KEB's database: %w", err)
		}
		f.Snapshot.Instances, f.Absorbed, f.Snapshot.TakenAt = read.Counts, read.Absorbed, read.TakenAt
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, name := range shootsWithoutBinding {
		r.Log.Warn("shoot names no credentials binding", zap.String("shoot", name))
		f.Snapshot.Skipped = append(f.Snapshot.Skipped, hap.Skipped{Kind: "Shoot", Name: name,
			Reason: "neither spec.credentialsBindingName nor spec.secretBindingName is set"})
	}
	f.Tally = hap.NewTally(f.Snapshot)
	r.Log.Info("gathered the fleet",
		zap.Int("bindings", len(f.Snapshot.Bindings)),
		zap.Int("shoots", len(f.Snapshot.Shoots)),
		zap.Int("instanceGroups", len(f.Snapshot.Instances)),
		zap.Int("skipped", len(f.Snapshot.Skipped)),
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
