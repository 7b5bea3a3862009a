package resolvecost

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/bench"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	costRun       = flag.Bool("resolve.cost", false, "measure KEB's resolve step end to end, live path against the candidate table (make resolve-cost)")
	costSizes     = flag.String("resolve.cost.sizes", "S,M", "landscapes to measure: S, M, L, XL (test/bench's sizes) or a number of shoots")
	costDedicated = flag.Int("resolve.cost.dedicated", 300, "picks per path in each dedicated-pool cell")
	costShared    = flag.Int("resolve.cost.shared", 8, "picks per path in each shared-pool cell")
	costWorkers   = flag.Int("resolve.cost.workers", 8, "concurrent workers of the busy cells")
	costSeed      = flag.Uint64("resolve.cost.seed", 1, "seed of the landscapes and the requests")
	costOut       = flag.String("resolve.cost.out", "", "write the figures as JSON to this file, and the table as markdown beside it (.md)")
)

// cellFigures is one cell of the report.
type cellFigures struct {
	Size      string      `json:"size"`
	Shoots    int         `json:"shoots"`
	Bindings  int         `json:"bindings"`
	Instances int         `json:"instanceRows"`
	Pool      string      `json:"pool"`
	Workers   int         `json:"workers"`
	IdleConns int         `json:"idleConnections"`
	Live      pathFigures `json:"kebLivePath"`
	Table     pathFigures `json:"adoptedStep"`
	Trusted   pathFigures `json:"adoptedStepTrusted"`
	Statement pathFigures `json:"statementAlone"`
	// Ratios of the same cell's figures: the live path's time over the
	// adopted step's, and over the statement's alone.
	LiveOverTableP50     float64 `json:"liveOverTableP50"`
	LiveOverTableP99     float64 `json:"liveOverTableP99"`
	LiveOverTrustedP50   float64 `json:"liveOverTrustedP50"`
	LiveOverTrustedP99   float64 `json:"liveOverTrustedP99"`
	LiveOverStatementP50 float64 `json:"liveOverStatementP50"`
	TableOverStatement50 float64 `json:"tableOverStatementP50"`
	WallSeconds          float64 `json:"wallSeconds"`
	LoadBefore           string  `json:"loadAverageBefore"`
	LoadAfter            string  `json:"loadAverageAfter"`
}

// TestResolveCost measures KEB's resolve step both ways in one run
// (package comment), per size, for both pool kinds, quiet (one worker) and
// with workers at once. Figures, not assertions (docs/benchmarks.md).
func TestResolveCost(t *testing.T) {
	if !*costRun {
		t.Skip("a measurement: make resolve-cost")
	}
	testbed.Require(t)
	sizes, err := bench.ParseSizes(*costSizes)
	if err != nil {
		t.Fatal(err)
	}
	var cells []cellFigures
	for _, size := range sizes {
		ctx := testbed.Context(t, 120*time.Minute)
		got, err := measureSize(t, ctx, size)
		cells = append(cells, got...)
		if err != nil {
			t.Errorf("size %s: %v", size.Name, err)
			break
		}
	}
	report(t, cells)
}

func measureSize(t *testing.T, ctx context.Context, size bench.Size) ([]cellFigures, error) {
	say := func(format string, args ...any) {
		t.Logf("[%s] %s: %s", time.Now().Format("15:04:05"), size.Name, fmt.Sprintf(format, args...))
	}
	l := bench.Generate(size, *costSeed)
	base := cellFigures{Size: size.Name, Shoots: len(l.Shoots), Bindings: len(l.Bindings), Instances: len(l.Instances)}
	say("loading %d shoots, %d bindings and %d instance rows", base.Shoots, base.Bindings, base.Instances)
	w := load(t, ctx, "rc-"+strings.ToLower(size.Name), l)
	dedicated := requests(l, false, 10000, *costSeed)
	shared := requests(l, true, 1000, *costSeed)
	w.landscape, l = nil, nil
	runtime.GC()

	busy := max(1, *costWorkers)
	specs := []cellSpec{
		{workers: 1, rounds: *costDedicated, warmUp: 10},
		{workers: busy, rounds: (*costDedicated + busy - 1) / busy, warmUp: 2},
		// KEB's pool keeping an idle connection for every worker
		// (APP_DATABASE_MAX_IDLE_CONNS, a setting of KEB's, no code).
		{workers: busy, rounds: (*costDedicated + busy - 1) / busy, warmUp: 2, idle: min(busy, kebMaxOpenConns)},
		{shared: true, workers: 1, rounds: *costShared, warmUp: 1},
		{shared: true, workers: busy, rounds: max(1, *costShared/busy)},
		{shared: true, workers: busy, rounds: max(1, *costShared/busy), idle: min(busy, kebMaxOpenConns)},
	}
	var out []cellFigures
	for _, spec := range specs {
		// A table of this moment for each cell: the runs of a large size
		// outlast the table's maximum age.
		if err := w.computeTable(ctx); err != nil {
			return out, err
		}
		reqs := dedicated
		if spec.shared {
			reqs = shared
		}
		say("%s pool, %d worker(s), %d idle connections, %d rounds each; load %s", spec.poolKind(), spec.workers, spec.idleConns(), spec.rounds, loadAverage())
		run, err := w.runCell(ctx, spec, reqs)
		if err != nil {
			return out, fmt.Errorf("%s pool, %d workers: %w", spec.poolKind(), spec.workers, err)
		}
		c := base
		c.Pool, c.Workers, c.IdleConns = spec.poolKind(), spec.workers, spec.idleConns()
		c.Live, c.Table, c.Statement = summarise(run.samples, pathLive), summarise(run.samples, pathTable), summarise(run.samples, pathStatement)
		c.Trusted = summarise(run.samples, pathTrusted)
		c.LiveOverTableP50, c.LiveOverTableP99 = ratio(c.Live.P50, c.Table.P50), ratio(c.Live.P99, c.Table.P99)
		c.LiveOverTrustedP50, c.LiveOverTrustedP99 = ratio(c.Live.P50, c.Trusted.P50), ratio(c.Live.P99, c.Trusted.P99)
		c.LiveOverStatementP50, c.TableOverStatement50 = ratio(c.Live.P50, c.Statement.P50), ratio(c.Table.P50, c.Statement.P50)
		c.WallSeconds = round1(run.wall.Seconds())
		c.LoadBefore, c.LoadAfter = run.loadBefore, run.loadAfter
		say("live p50 %.1f ms, adopted step p50 %.1f ms confirmed, %.1f ms trusted, statement p50 %.2f ms; load %s", c.Live.P50, c.Table.P50, c.Trusted.P50, c.Statement.P50, c.LoadAfter)
		out = append(out, c)
	}
	return out, nil
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return round1(a / b)
}

// report logs the cells as JSON and as a markdown table, and writes both
// when asked.
func report(t *testing.T, cells []cellFigures) {
	text, err := json.MarshalIndent(cells, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	table := markdown(cells)
	t.Logf("KEB's resolve step end to end:\n%s\n%s", text, table)
	if *costOut != "" {
		if err := os.WriteFile(*costOut, text, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.TrimSuffix(*costOut, ".json")+".md", []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// markdown is the table docs/benchmarks.md shows.
func markdown(cells []cellFigures) string {
	var b strings.Builder
	b.WriteString("| size | pool | workers (idle connections) | path | picks | p50 ms | p99 ms | max ms | p50 parts: Gardener + update + rest, ms | KB read / pick | API CPU ms / pick | timeouts | failures | live ÷ this, p50 | live ÷ this, p99 | load before → after |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range cells {
		for _, p := range []struct {
			name string
			f    pathFigures
		}{{"KEB live path", c.Live}, {"adopted step, confirmed", c.Table}, {"adopted step, trusted", c.Trusted}, {"statement alone", c.Statement}} {
			cpu := "–"
			if c.Workers == 1 {
				cpu = fmt.Sprintf("%.1f", p.f.ServerCPUMillisPerPick)
			}
			fails := fmt.Sprint(p.f.Failures)
			if p.f.FellBack > 0 {
				fails += fmt.Sprintf(" (%d fell back)", p.f.FellBack)
			}
			r50, r99 := "", ""
			if p.name != "KEB live path" {
				r50, r99 = fmt.Sprintf("%.1f×", ratio(c.Live.P50, p.f.P50)), fmt.Sprintf("%.1f×", ratio(c.Live.P99, p.f.P99))
			}
			fmt.Fprintf(&b, "| %s (%d shoots) | %s | %d (%d) | %s | %d | %s | %s | %s | %s + %s + %s | %.1f | %s | %d | %s | %s | %s | %s → %s |\n",
				c.Size, c.Shoots, c.Pool, c.Workers, c.IdleConns, p.name, p.f.Picks, ms(p.f.P50), ms(p.f.P99), ms(p.f.Max),
				ms(p.f.GardenerP50), ms(p.f.UpdateP50), ms(p.f.RestP50), p.f.KBPerPick, cpu,
				p.f.Timeouts, fails, r50, r99, c.LoadBefore, c.LoadAfter)
		}
	}
	return b.String()
}

func ms(x float64) string {
	if x < 10 {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.0f", x)
}
