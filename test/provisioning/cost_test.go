package provisioning_test

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	_ "github.com/lib/pq" // KEB's driver

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	costRun   = flag.Bool("pick.cost", false, "measure a pick's cost at XL (make pick-cost)")
	costPicks = flag.Int("pick.cost.picks", 2000, "picks per configuration with KEB's index (a tenth without it)")
	costOut   = flag.String("pick.cost.out", "", "write the figures as JSON to this file")
)

// The XL landscape's shape in KEB's table: 400,000 instance rows, a
// quarter of them deleted (KEB keeps them), on 30,000 bindings of 20,000
// GAs, about ten active clusters a binding.
const (
	costRows     = 400000
	costBindings = 30000
	costGAs      = 20000
)

// costFigure is one configuration's picks.
type costFigure struct {
	Driver    string  `json:"driver"`
	KEBIndex  bool    `json:"kebIndex"`
	Window    int     `json:"instancesCreatedInTheLastHour"`
	Picks     int     `json:"picks"`
	P50Millis float64 `json:"p50Millis"`
	P99Millis float64 `json:"p99Millis"`
}

// TestPickCostAtXL measures the pick (the statement a Client prepares, as
// KEB's resolve step runs it before Gardener's confirmation) at XL, through
// lib/pq and pgx, with and without the index KEB adds, with 0 to 20,000
// instances of other GAs created in the last hour. Figures, not
// assertions: docs/benchmarks.md holds them. Configurations alternate so
// that the machine's load falls on all alike.
func TestPickCostAtXL(t *testing.T) {
	if !*costRun {
		t.Skip("a measurement: make pick-cost")
	}
	b := newBed(t)
	ctx := testbed.Context(t, 90*time.Minute)
	rows := make([]hap.Candidate, 0, costBindings)
	for k := range costBindings {
		rows = append(rows, candidate(fmt.Sprintf("ga-%d", k%costGAs), fmt.Sprintf("b-%d", k), 10, 1+k/costGAs, limit(100)))
	}
	seedXLInstances(t, b)
	if err := b.store.ReplaceCandidates(ctx, rows, nil, time.Now(), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	pq, err := sql.Open("postgres", b.url)
	if err != nil {
		t.Fatal(err)
	}
	defer pq.Close()
	drivers := map[string]*sql.DB{"lib/pq": pq, "pgx": b.keb}

	var figures []costFigure
	window := 0
	for _, size := range []int{0, 1000, 5000, 20000} {
		b.exec(t, fmt.Sprintf(`INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
			provisioning_parameters, created_at, updated_at)
			SELECT 'new-' || g, 'rn-' || g, 'ga-x' || (g %% 5000), 'bx-' || (g %% 3000), '{}', now() - make_interval(secs => g %% 3000), now()
			FROM generate_series(%d, %d) g`, window+1, size))
		window = size
		for _, indexed := range []bool{true, false} {
			if indexed {
				b.exec(t, schema.KEBIndexUp)
			} else {
				b.exec(t, schema.KEBIndexDown)
			}
			b.exec(t, `VACUUM ANALYZE instances`)
			picks := *costPicks
			if !indexed {
				picks /= 10
			}
			// The drivers alternate in blocks of 50 picks.
			lat := map[string][]time.Duration{}
			clients := map[string]*provisioning.Client{}
			for name, db := range drivers {
				clients[name] = &provisioning.Client{DB: db, Timeout: time.Minute}
			}
			rng := rand.New(rand.NewPCG(uint64(size), 7))
			for block := 0; block < picks/50; block++ {
				for _, name := range []string{"lib/pq", "pgx"} {
					for i := range 50 {
						ga := fmt.Sprintf("ga-%d", rng.IntN(costGAs))
						id := fmt.Sprintf("cost-%s-%d-%t-%d-%d", name, size, indexed, block, i)
						if err := b.requested(ctx, id, ga); err != nil {
							t.Fatal(err)
						}
						started := time.Now()
						pick, err := clients[name].Propose(ctx, provisioning.Request{InstanceID: id, GlobalAccountID: ga, HyperscalerType: "aws"})
						lat[name] = append(lat[name], time.Since(started))
						if err != nil || pick.Binding == "" {
							t.Fatalf("pick %s: %+v, %v", id, pick, err)
						}
					}
				}
			}
			for name, c := range clients {
				_ = c.Close()
				figures = append(figures, costFigure{Driver: name, KEBIndex: indexed, Window: size, Picks: len(lat[name]),
					P50Millis: testbed.QuantileMillis(lat[name], 0.50), P99Millis: testbed.QuantileMillis(lat[name], 0.99)})
			}
		}
	}
	slices.SortStableFunc(figures, func(a, b costFigure) int {
		return cmp.Or(cmp.Compare(a.Window, b.Window), cmp.Compare(fmt.Sprint(b.KEBIndex), fmt.Sprint(a.KEBIndex)), cmp.Compare(a.Driver, b.Driver))
	})
	for _, f := range figures {
		t.Logf("window %6d  index %-5t  %-6s  picks %5d  p50 %7.2f ms  p99 %7.2f ms", f.Window, f.KEBIndex, f.Driver, f.Picks, f.P50Millis, f.P99Millis)
	}
	if *costOut != "" {
		out, _ := json.MarshalIndent(figures, "", "  ")
		if err := os.WriteFile(*costOut, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// seedXLInstances fills KEB's instances with XL's rows (costRows over
// costBindings bindings of costGAs GAs, a quarter of them deleted, spread
// over two years), as KEB's table looks after years of provisioning.
func seedXLInstances(t *testing.T, b *bed) {
	t.Helper()
	b.exec(t, fmt.Sprintf(`INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
		provisioning_parameters, created_at, updated_at, deleted_at)
		SELECT 'old-' || g, 'r-' || g, 'ga-' || ((g %% %[2]d) %% %[3]d), 'b-' || (g %% %[2]d), '{}',
		       now() - make_interval(days => 1 + g %% 700), now() - make_interval(days => g %% 700),
		       CASE WHEN g %% 4 = 0 THEN now() - make_interval(days => g %% 500) ELSE '0001-01-01 00:00:00+00' END
		FROM generate_series(1, %[1]d) g`, costRows, costBindings, costGAs))
}
