package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// Options say what to measure.
type Options struct {
	Sizes []Size
	// Picks is the number of measured picks per path and size.
	Picks int
	// LiveBudget ends each KEB live path's picks early once used up; 0
	// means no limit.
	LiveBudget time.Duration
	// Repeats is the number of measured runs and floors per size, after
	// one unmeasured run; the median is reported.
	Repeats int
	// SteadyCycles is the number of measured watched cycles per size.
	SteadyCycles int
	Seed         uint64
	// Binary is the hap-reconciler binary to run, built from this tree.
	Binary string
	// WorkDir receives the runs' configuration files.
	WorkDir string
	// Progress receives a line per step; nil discards them.
	Progress io.Writer
	// Rewrites is the load of the picks-during-rewrites measurement.
	Rewrites RewriteLoad
	// TableRewriteEvery is how many one-query picks are made between two
	// rewrites of the candidate table by the candidates job; 0 means
	// DefaultTableRewriteEvery.
	TableRewriteEvery int
	// APIServerArgs are the flags the test bed's API servers were started
	// with beside its defaults (see ServerArgs), for the report.
	APIServerArgs []string
}

// DefaultTableRewriteEvery is the picks between two rewrites of the table:
// the one query reads the instances KEB created since the table's snapshot,
// so a figure taken with no rewrite for 10,000 picks measures a window no
// production table has (serve rewrites the table on a change and every five
// minutes). Between two blocks of 250 picks an
// hour passes (anHourPasses) and the table is rewritten: 250 provisionings
// within one table's window is still more than KEB sees.
const DefaultTableRewriteEvery = 250

// DefaultRewriteLoad is 8 pickers on 8,000 bindings while the table is
// rewritten every 3 seconds with 5% of its rows changed, for 45 seconds.
var DefaultRewriteLoad = RewriteLoad{Bindings: 8000, Pickers: 8, Every: 3, ChangedShare: 0.05, Duration: 45}

// Measure loads each size into a world of its own in bed and measures it.
func Measure(ctx context.Context, bed *testbed.Bed, opts Options) (*Report, error) {
	if (len(opts.Sizes) == 0 && opts.Rewrites.Bindings == 0) || opts.Picks < 1 || opts.Repeats < 1 || opts.SteadyCycles < 1 || opts.Binary == "" || opts.WorkDir == "" {
		return nil, errors.New("bench: sizes, picks, repeats, steady cycles, binary and work dir must all be set")
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	r := &Report{
		Taken:   time.Now().UTC().Truncate(time.Second),
		Binary:  binaryVersion(ctx, opts.Binary),
		Machine: thisMachine(),
		Settings: Settings{Picks: opts.Picks, LiveBudget: Seconds(opts.LiveBudget.Seconds()), Repeats: opts.Repeats, SteadyCycles: opts.SteadyCycles,
			PageSize: config.Default().Gardener.PageSize, Seed: opts.Seed, APIServerArgs: opts.APIServerArgs},
	}
	for _, size := range opts.Sizes {
		res, err := measureSize(ctx, bed, size, opts)
		if err != nil {
			return nil, fmt.Errorf("size %s: %w", size.Name, err)
		}
		r.Sizes = append(r.Sizes, res)
	}
	if opts.Rewrites.Bindings > 0 {
		fmt.Fprintf(opts.Progress, "picks during rewrites: %d pickers on %d bindings, a rewrite every %ss, for %ss\n",
			opts.Rewrites.Pickers, opts.Rewrites.Bindings, f1(float64(opts.Rewrites.Every)), f1(float64(opts.Rewrites.Duration)))
		w, err := bed.NewWorld(ctx, "bench-rewrites")
		if err != nil {
			return nil, err
		}
		if r.Rewrites, err = measurePicksUnderRewrites(ctx, w, bed.Postgres.LogPath(), opts.Rewrites); err != nil {
			return nil, fmt.Errorf("picks during rewrites: %w", err)
		}
	}
	r.Targets = targetsOf(r.Sizes)
	if rw := r.Rewrites; rw.During.Picks > 0 {
		r.Targets = append(r.Targets, Target{What: "lock waits over 50 ms while picks and rewrites run (log_lock_waits)", Want: "none",
			Got: fmt.Sprintf("%d (longest %.1f ms; %d picks of %d took over 50 ms end to end)", rw.LockWaitsOver50, float64(rw.LongestLockWait),
				rw.OverTarget, rw.During.Picks+rw.Outside.Picks),
			Met: rw.LockWaitsOver50 == 0})
	}
	return r, nil
}

func measureSize(ctx context.Context, bed *testbed.Bed, size Size, opts Options) (SizeResult, error) {
	say := func(format string, args ...any) {
		fmt.Fprintf(opts.Progress, "[%s] %s: %s\n", time.Now().Format("15:04:05"), size.Name, fmt.Sprintf(format, args...))
	}
	res := SizeResult{Size: size}
	l := Generate(size, opts.Seed)
	res.Landscape = describe(l)
	say("loading %d shoots, %d bindings and %d instance rows", len(l.Shoots), len(l.Bindings), len(l.Instances))
	w, err := bed.NewWorld(ctx, "bench-"+strings.ToLower(size.Name))
	if err != nil {
		return res, err
	}
	start := time.Now()
	step := max(1, (len(l.Shoots)+len(l.Bindings))/10)
	progress := func(done, total int) {
		if done%step == 0 {
			say("loaded %d of %d objects", done, total)
		}
	}
	// Seeded into gardener-apiserver's storage: admission would take hours
	// at XL.
	if err := landscape.SeedGardenerAPIServer(ctx, bed.Kube, w.Namespace, l, progress); err != nil {
		return res, err
	}
	if err := landscape.LoadInstances(ctx, w.DatabaseURL, l); err != nil {
		return res, err
	}
	res.Landscape.LoadSeconds = since(start)
	// The generated objects fill a large heap in this process, and l is
	// not used below: collect them now, so that the floor and the watched
	// cycle measured in this process do not pay for scanning them.
	requests := pickRequests(l, opts.Picks+pickWarmUp, opts.Seed)
	runtime.GC()

	repeats := size.repeats(opts.Repeats)
	say("measuring %d runs against the floor, after one warm-up run", repeats)
	run, err := newRunner(opts.WorkDir, opts.Binary, bed.Kube.KubeconfigPath(), w.Namespace, w.DatabaseURL)
	if err != nil {
		return res, err
	}
	if err := runsAndFloors(ctx, run, bed, w, repeats, &res); err != nil {
		return res, err
	}
	// As JSON, comparable with the figures of the custom-resource test bed.
	res.Landscape.ServedKBPerShoot = round(float64(res.JSONFloor.Shoots.Bytes)/float64(res.Landscape.Shoots)/1024, 1)

	say("measuring serve's watched cycle")
	if res.Steady, err = measureSteady(ctx, bed.Kube.Config(), w.Namespace, w.DatabaseURL, opts.SteadyCycles); err != nil {
		return res, err
	}
	if res.Steady.CachedFill, err = measureCachedFill(ctx, bed.Kube.Config(), w.Namespace, config.Default().Gardener.PageSize); err != nil {
		return res, err
	}

	say("measuring %d picks on each path", opts.Picks)
	rewrite := tableRewrite{every: cmp.Or(opts.TableRewriteEvery, DefaultTableRewriteEvery), run: run.rewriteCandidates}
	if res.Picks, err = measurePicks(ctx, bed.Kube.Config(), w.Namespace, w.DatabaseURL, requests, clusterLimit, opts.LiveBudget, rewrite); err != nil {
		return res, err
	}
	res.Ratios = ratiosOf(res)
	say("done: run %.2fs, floor %.2fs, watched cycle %.3fs", res.Run.Wall, res.Floor.Wall, res.Steady.Wall)
	return res, nil
}

// runsAndFloors measures runs and floors together, one right after the
// other, so each side sees the machine alike, and fills in the medians and
// each pair's figures: a run, the floor in the format the job asks for
// (protobuf where the server offers it) and the floor in JSON. The order
// rotates (run first, then the preferred floor first, then the JSON floor
// first, ...): what a measurement leaves behind for the next, such as the
// warm-up run's writes still settling in PostgreSQL, falls on each alike.
// The API servers' CPU time is read around each run.
func runsAndFloors(ctx context.Context, run *runner, bed *testbed.Bed, w *testbed.World, repeats int, res *SizeResult) error {
	if _, err := run.run(ctx); err != nil {
		return fmt.Errorf("warm-up run: %w", err)
	}
	pageSize := config.Default().Gardener.PageSize
	runs := make([]RunFigures, 0, repeats)
	floors := make([]Floor, 0, repeats)
	jsonFloors := make([]Floor, 0, repeats)
	for i := range repeats {
		var r RunFigures
		var f, jf Floor
		steps := []func() error{
			func() (err error) {
				before := ServerCPU(bed.Kube.PIDs())
				if r, err = run.run(ctx); err == nil {
					r.ServerCPU = ServerCPU(bed.Kube.PIDs()) - before
				}
				return err
			},
			func() (err error) {
				f, err = measureFloor(ctx, bed.Kube.Config(), w.Namespace, w.DatabaseURL, pageSize, acceptPreferred)
				return err
			},
			func() (err error) {
				jf, err = measureFloor(ctx, bed.Kube.Config(), w.Namespace, w.DatabaseURL, pageSize, acceptJSON)
				return err
			},
		}
		for k := range steps {
			if err := steps[(i+k)%len(steps)](); err != nil {
				return err
			}
		}
		runs, floors, jsonFloors = append(runs, r), append(floors, f), append(jsonFloors, jf)
		res.RunWalls, res.FloorWalls = append(res.RunWalls, r.Wall), append(res.FloorWalls, f.Wall)
		res.JSONFloorWalls = append(res.JSONFloorWalls, jf.Wall)
		res.Pairs = append(res.Pairs, Pair{
			RunOverFloor:     ratio(float64(r.Wall), float64(f.Wall)),
			RunOverJSONFloor: ratio(float64(r.Wall), float64(jf.Wall)),
			GatherOverFloor:  ratio(float64(r.Phases.Gather), float64(f.Wall)),
		})
	}
	res.Run, res.Floor, res.JSONFloor = medianRun(runs), medianFloor(floors), medianFloor(jsonFloors)
	// A memory limit must allow the highest peak, not the median one.
	for _, r := range runs {
		res.Run.MaxRSSMB = max(res.Run.MaxRSSMB, r.MaxRSSMB)
		res.Run.PeakHeapMB, res.Run.MaxLiveMB = max(res.Run.PeakHeapMB, r.PeakHeapMB), max(res.Run.MaxLiveMB, r.MaxLiveMB)
	}
	return nil
}

func medianRun(runs []RunFigures) RunFigures {
	sort.Slice(runs, func(i, j int) bool { return runs[i].Wall < runs[j].Wall })
	return runs[len(runs)/2]
}

func medianFloor(floors []Floor) Floor {
	sort.Slice(floors, func(i, j int) bool { return floors[i].Wall < floors[j].Wall })
	return floors[len(floors)/2]
}

// describe counts what a landscape holds.
func describe(l *landscape.Landscape) LandscapeFigures {
	f := LandscapeFigures{GlobalAccounts: len(l.GlobalAccounts), Shoots: len(l.Shoots), Bindings: len(l.Bindings), InstanceRows: len(l.Instances)}
	for _, i := range l.Instances {
		if i.Active() {
			f.ActiveInstances++
		}
	}
	return f
}
