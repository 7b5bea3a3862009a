package parity

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

type groupKey struct {
	ga   string
	pool hap.Pool
}

// coverage counts what the landscapes exercised, so the suite cannot pass
// on landscapes that miss the cases it is about.
type coverage struct {
	groups, guarded, claimNew, deviations, inNoPool, sharedPicks int
}

// For every (GA, pool) of random landscapes, rank 1 of the candidate table
// and NextBinding's pick are KEB's own choice, stated independently in
// test/kebrules, except where the job names a rank_one_deviation; and the
// job's statement of KEB's choice (hap.KEBChoice) is KEB's choice always.
func TestRankOneIsKEBsChoice(t *testing.T) {
	testbed.Require(t)
	kebValues, err := os.ReadFile("../../internal/config/testdata/keb-values-hap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cov coverage
	for seed := *seedFrom; seed < *seedFrom+uint64(*seeds); seed++ {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			checkWorld(t, randomWorld(seed, string(kebValues)), &cov)
		})
	}
	t.Logf("checked %d (GA, pool) groups: %d guarded, %d claim new, %d rank-1 deviations named, %d bindings in no pool, %d shared picks",
		cov.groups, cov.guarded, cov.claimNew, cov.deviations, cov.inNoPool, cov.sharedPicks)
	if *seeds >= 8 && (cov.guarded == 0 || cov.claimNew == 0 || cov.deviations == 0 || cov.inNoPool == 0 || cov.sharedPicks == 0) {
		t.Fatalf("the landscapes missed a case: %+v", cov)
	}
}

func checkWorld(t *testing.T, w world, cov *coverage) {
	ctx := testbed.Context(t, 5*time.Minute)
	loaded, err := landscape.LoadWorld(ctx, bed, "parity", w.l)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", loaded.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := nullOwners(ctx, db); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	if err := config.Parse([]byte(w.yaml), &cfg); err != nil {
		t.Fatalf("KEB's hap block refused: %v\n%s", err, w.yaml)
	}
	cfg.Namespace = loaded.Namespace
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	env, err := app.Open(ctx, app.Inputs{
		Config: cfg, RESTConfig: bed.Kube.Config(), DatabaseURL: loaded.DatabaseURL,
		Getenv: func(string) string { return "" },
		Log:    zaptest.NewLogger(t, zaptest.Level(zapcore.ErrorLevel)),
		Now:    time.Now,
	}, app.Needs{Gardener: true, Database: true, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if err := env.Runner.Run(ctx, jobs.Options{Jobs: []string{jobs.JobDrift, jobs.JobCandidates}}); err != nil {
		t.Fatal(err)
	}
	stored, err := env.Store.Candidates(ctx, hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[groupKey][]hap.Candidate{}
	for _, c := range stored {
		k := groupKey{c.GlobalAccountID, c.Pool}
		groups[k] = append(groups[k], c.Candidate)
	}
	findings, err := env.Store.OpenFindings(ctx, hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	deviation := map[groupKey]bool{}
	for _, f := range findings {
		switch f.Kind {
		case hap.KindRankOneDeviation:
			deviation[groupKey{f.GlobalAccountID, f.Pool}] = true
		case hap.KindInNoPool:
			cov.inNoPool++
		}
	}

	dyn, err := dynamic.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	k := &kebrules.KEB{
		Bindings: dyn.Resource(testbed.CredentialsBindingsResource).Namespace(loaded.Namespace),
		Shoots:   dyn.Resource(testbed.ShootsResource).Namespace(loaded.Namespace),
		DB:       db, Config: w.cfg,
	}
	pick := 0
	client := &provisioning.Client{DB: db, Gardener: k.Gardener()}
	defer client.Close()
	nextBinding := func(ga string, pool hap.Pool) kebrules.Decision {
		pick++
		got, err := client.NextBinding(ctx, provisioning.Request{
			InstanceID: fmt.Sprintf("parity-pick-%d", pick), GlobalAccountID: ga, HyperscalerType: pool.HyperscalerType, EUAccess: pool.EUAccess})
		switch {
		case errors.Is(err, provisioning.ErrGuarded):
			return kebrules.Decision{Guarded: true}
		case errors.Is(err, provisioning.ErrSharedPoolEmpty):
			return kebrules.Decision{NoBinding: true}
		case err != nil:
			t.Fatalf("NextBinding for %s in %s: %v", ga, pool, err)
		}
		return kebrules.Decision{Binding: got.Binding, ClaimNew: got.ClaimNew}
	}

	for _, ga := range w.gas {
		for _, pool := range w.dedicatedPools {
			key := groupKey{ga, pool}
			seen, err := k.Dedicated(ctx, ga, pool)
			if err != nil {
				t.Fatal(err)
			}
			want := seen.Decision
			group := groups[key]
			cov.groups++
			if want.Guarded {
				cov.guarded++
			}
			if want.ClaimNew {
				cov.claimNew++
			}
			if got := verdictOf(hap.KEBChoice(group)); got != want {
				t.Errorf("GA %s, pool %s: the job states KEB's choice as %s, KEB chooses %s\nrows %s", ga, pool, got, want, rowsText(group))
			}
			job := verdictOf(hap.Choose(group))
			switch {
			case job != want && !deviation[key]:
				t.Errorf("GA %s, pool %s: rank 1 is %s, KEB chooses %s, and no deviation is named\nrows %s", ga, pool, job, want, rowsText(group))
			case job == want && deviation[key]:
				t.Errorf("GA %s, pool %s: a deviation is named, but rank 1 %s is KEB's choice", ga, pool, job)
			case deviation[key]:
				cov.deviations++
			}
			if got := nextBinding(ga, pool); got != job {
				t.Errorf("GA %s, pool %s: NextBinding gives %s, rank 1 is %s", ga, pool, got, job)
			}
		}
	}
	for _, pool := range w.sharedPools {
		seen, err := k.Shared(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		want := seen.Decision
		cov.groups++
		rank1 := verdictOf(hap.Choose(groups[groupKey{"", pool}]))
		if rank1.ClaimNew { // no row: the pick answers that the pool is empty
			rank1 = kebrules.Decision{NoBinding: true}
		}
		if got := rank1; got != want {
			t.Errorf("shared pool %s: rank 1 is %s, KEB picks %s\nrows %s", pool, got, want, rowsText(groups[groupKey{"", pool}]))
		}
		if got := nextBinding("", pool); got != want {
			t.Errorf("shared pool %s: NextBinding gives %s, KEB picks %s", pool, got, want)
		}
		if !want.NoBinding {
			cov.sharedPicks++
		}
	}
}

func verdictOf(c hap.Choice) kebrules.Decision {
	return kebrules.Decision{Binding: c.Binding, ClaimNew: c.ClaimNew, Guarded: c.Guarded}
}

func rowsText(rows []hap.Candidate) string {
	out := ""
	for _, r := range rows {
		limit := "-"
		if r.Limit != nil {
			limit = fmt.Sprint(*r.Limit)
		}
		out += fmt.Sprintf("\n  %s rank %d db %d shoots %d effective %d limit %s selectable %t guarded %t",
			r.BindingName, r.Rank, r.DBCount, r.ShootCount, r.EffectiveCount, limit, r.Selectable, r.Guarded)
	}
	return out
}
