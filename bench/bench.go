package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/kyma-project/hap-reconciler/config"
	"github.com/kyma-project/hap-reconciler/testbed"
	"github.com/kyma-project/hap-reconciler/testbed/landscape"
)

// Options say what to measure.
type Options struct {
	Sizes []Size
	// Picks is the number of measured picks per path and size.
	Picks int
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
}

// Measure loads each size into a world of its own in bed and measures it.
func Measure(ctx context.Context, bed *testbed.Bed, opts Options) (*Report, error) {
	if len(opts.Sizes) == 0 || opts.Picks < 1 || opts.Repeats < 1 || opts.SteadyCycles < 1 || opts.Binary == "" || opts.WorkDir == "" {
		return nil, errors.New("bench: sizes, picks, repeats, steady cycles, binary and work dir must all be set")
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	r := &Report{
		Taken:   time.Now().UTC().Truncate(time.Second),
		Machine: thisMachine(),
		Settings: Settings{Picks: opts.Picks, Repeats: opts.Repeats, SteadyCycles: opts.SteadyCycles,
			PageSize: config.Default().Gardener.PageSize, Seed: opts.Seed},
	}
	for _, size := range opts.Sizes {
		res, err := measureSize(ctx, bed, size, opts)
		if err != nil {
			return nil, fmt.Errorf("size %s: %w", size.Name, err)
		}
		r.Sizes = append(r.Sizes, res)
	}
	r.Targets = targetsOf(r.Sizes)
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
	if err := landscape.LoadGardener(ctx, bed.Kube.Config(), w.Namespace, l, func(done, total int) {
		if done%step == 0 {
			say("loaded %d of %d objects", done, total)
		}
	}); err != nil {
		return res, err
	}
	if err := landscape.LoadInstances(ctx, w.DatabaseURL, l); err != nil {
		return res, err
	}
	res.Landscape.LoadSeconds = since(start)

	say("measuring %d runs against the floor, after one warm-up run", opts.Repeats)
	run, err := newRunner(opts.WorkDir, opts.Binary, bed.Kube.KubeconfigPath(), w.Namespace, w.DatabaseURL)
	if err != nil {
		return res, err
	}
	if res.Run, res.RunWalls, res.Floor, err = runsAndFloors(ctx, run, bed, w, opts.Repeats); err != nil {
		return res, err
	}
	res.Landscape.ServedKBPerShoot = round(float64(res.Floor.Shoots.Bytes)/float64(len(l.Shoots))/1024, 1)

	say("measuring serve's watched cycle")
	if res.Steady, err = measureSteady(ctx, bed.Kube.Config(), w.Namespace, w.DatabaseURL, opts.SteadyCycles); err != nil {
		return res, err
	}

	say("measuring %d picks on each path", opts.Picks)
	if res.Picks, err = measurePicks(ctx, bed.Kube.Config(), w.Namespace, w.DatabaseURL, l, opts.Picks, clusterLimit); err != nil {
		return res, err
	}
	res.Ratios = ratiosOf(res)
	say("done: run %.2fs, floor %.2fs, watched cycle %.3fs", res.Run.Wall, res.Floor.Wall, res.Steady.Wall)
	return res, nil
}

// runsAndFloors alternates measured runs with floors, so both see the
// machine in the same state, and returns the medians.
func runsAndFloors(ctx context.Context, run *runner, bed *testbed.Bed, w *testbed.World, repeats int) (RunFigures, []Seconds, Floor, error) {
	if _, err := run.run(ctx); err != nil {
		return RunFigures{}, nil, Floor{}, fmt.Errorf("warm-up run: %w", err)
	}
	runs := make([]RunFigures, 0, repeats)
	floors := make([]Floor, 0, repeats)
	for range repeats {
		r, err := run.run(ctx)
		if err != nil {
			return RunFigures{}, nil, Floor{}, err
		}
		runs = append(runs, r)
		f, err := measureFloor(ctx, bed.Kube.Config(), w.Namespace, w.DatabaseURL, config.Default().Gardener.PageSize)
		if err != nil {
			return RunFigures{}, nil, Floor{}, err
		}
		floors = append(floors, f)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Wall < runs[j].Wall })
	sort.Slice(floors, func(i, j int) bool { return floors[i].Wall < floors[j].Wall })
	walls := make([]Seconds, len(runs))
	peak := 0.0
	for i, r := range runs {
		walls[i] = r.Wall
		peak = max(peak, r.MaxRSSMB)
	}
	median := runs[len(runs)/2]
	// A memory limit must allow the highest peak, not the median one.
	median.MaxRSSMB = peak
	return median, walls, floors[len(floors)/2], nil
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
