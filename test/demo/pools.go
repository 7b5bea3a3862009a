package main

import (
	"context"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/report"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// claimsPerDay is how fast the demo's history says the aws pool was
// drained over the last week.
const claimsPerDay = 2

// backdatePoolHistory records a week of earlier runs, in which the aws pool
// lost claimsPerDay free bindings a day, so the pool view has a claim rate
// to estimate from.
func backdatePoolHistory(ctx context.Context, n narrator, env *app.Env, l *landscape.Landscape) error {
	now := time.Now()
	n.step("Backdating the pool history: a week of earlier runs in which pool aws lost %d free bindings a day", claimsPerDay)
	n.note("(a real deployment records one sample per pool on every metrics run, in %s.pool_history, kept %s)", env.Store.Schema(), hap.PoolHistoryRetention)
	today := hap.DecidePools(hap.NewTally(l.Snapshot()), nil)
	for day := 7; day >= 1; day-- {
		earlier := make([]hap.PoolStats, len(today))
		copy(earlier, today)
		for i := range earlier {
			if earlier[i].PoolKey == (hap.PoolKey{Pool: awsPool}) {
				earlier[i].Free += claimsPerDay * day
				earlier[i].Claimed -= claimsPerDay * day
			}
		}
		if err := env.Store.RecordPoolSamples(ctx, now.Add(-time.Duration(day)*24*time.Hour), earlier); err != nil {
			return err
		}
	}
	return nil
}

// showPools prints the pool view: every pool the rules name, its bindings,
// and the days until it runs out.
func showPools(ctx context.Context, n narrator, env *app.Env) error {
	rows, err := env.Reader.Pools(ctx, true)
	if err != nil {
		return err
	}
	n.step("Pools, as `hap-reconciler pools --live` prints them: every pool the rules name, and when it runs out")
	for _, r := range rows {
		switch {
		case r.DaysLeft != nil:
			n.note("pool %s: %d free, %.1f a day claimed over %d recorded runs: %.1f days left", r.HyperscalerType, r.Free, -r.FreePerDay, r.Samples, *r.DaysLeft)
		case len(r.Rules) > 0 && r.Free+r.Claimed+r.Dirty+r.SharedBindings == 0:
			n.note("pool %s (shared %t): the rules %q send runtimes there, but it holds no binding", r.HyperscalerType, r.Shared, r.Rules)
		}
	}
	return report.WritePoolsTable(n.out, rows, report.Layout{})
}
