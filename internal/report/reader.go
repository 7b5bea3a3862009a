package report

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// Snapshot is what a live read needs: a fresh snapshot of Gardener and
// KEB's database, gathered without writing (jobs.Runner.Gather).
type Snapshot interface {
	Gather(ctx context.Context) (*jobs.Facts, error)
}

// Reader is the read side of `report` and `pools`: stored, from the job's
// tables, or live, decided on a fresh snapshot. It writes nothing.
type Reader struct {
	Tables Store
	// Snapshot gathers for a live read; nil when only the tables are open.
	Snapshot Snapshot
	// Rules names the pools of the stored pool view (KEB's rule list).
	Rules hap.PoolNamer
	Now   func() time.Time
	Log   *zap.Logger
}

// Report is what `report` prints: live, the candidates and findings of a
// fresh snapshot; else the stored table and findings with how KEB's own
// picks since shadowSince compare with the table's.
func (r Reader) Report(ctx context.Context, ga string, live bool, shadowSince time.Time) (Report, error) {
	if live {
		f, err := r.Snapshot.Gather(ctx)
		if err != nil {
			return Report{}, err
		}
		if why := hap.Implausible(f.Tally); why != "" {
			// The report still shows what it sees; a run would refuse it.
			r.Log.Warn("a run would refuse this picture and change nothing: check the namespace and the kubeconfig", zap.String("why", why))
		}
		rep := buildReport(f.Candidates(), f.Findings(), ga)
		rep.Source, rep.ComputedAt = "live", r.Now()
		return rep, knownGA(rep, ga)
	}
	rep, err := Stored(ctx, r.Tables, ga)
	if err != nil {
		return Report{}, err
	}
	if err := knownGA(rep, ga); err != nil {
		return Report{}, err
	}
	sh, err := Shadow(ctx, r.Tables, shadowSince)
	if err != nil {
		return Report{}, err
	}
	rep.Shadow = &sh.ShadowSummary
	return rep, nil
}

// Pools is what `pools` prints: live, the pool view of a fresh snapshot
// with the recorded history (none before the first migrate: then no
// estimate); else the latest recorded sample of every pool.
func (r Reader) Pools(ctx context.Context, live bool) ([]hap.PoolRow, error) {
	now := r.Now()
	if !live {
		return storedPools(ctx, r.Tables, r.Rules, now)
	}
	f, err := r.Snapshot.Gather(ctx)
	if err != nil {
		return nil, err
	}
	history, err := r.Tables.PoolHistory(ctx, now.Add(-hap.ExhaustionWindow))
	if err != nil {
		r.Log.Warn("no pool history to estimate from: " + err.Error())
	}
	return hap.BuildPoolView(hap.DecidePools(f.Tally, f.Candidates()), f.Rules, history, now), nil
}

// errUnknownGA is the report for a GA that found nothing about it.
var errUnknownGA = errors.New("no row of the candidate table and no open drift finding names this global account")

// knownGA refuses a report for ga that found nothing: a mistyped ID would
// otherwise print an empty table and succeed.
func knownGA(rep Report, ga string) error {
	if ga == "" || len(rep.Groups) > 0 || len(rep.Other) > 0 {
		return nil
	}
	return fmt.Errorf("--ga %q: %w (%s): check the ID; report without --ga lists every global account", ga, errUnknownGA, rep.Source)
}
