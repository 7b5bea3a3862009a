package bench

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/gardener"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/logging"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// Steady is the cycle `serve` runs once it watches Gardener: the same
// Runner.Run over all jobs, with shoots and bindings read from the watch
// caches instead of listed. It runs in the benchmark's process, so its
// CPU time is the process's during the cycle.
type Steady struct {
	// FirstFill is opening the job watched, until the watch holds its first
	// full list: what serve pays at start.
	FirstFill Seconds `json:"firstFillSeconds"`
	// CacheHeapMB is the live heap the watch caches added.
	CacheHeapMB float64 `json:"cacheHeapMB"`
	Cycles      int     `json:"cycles"`
	Wall        Seconds `json:"wallSeconds"`
	CPU         Seconds `json:"cpuSeconds"`
	Phases      Phases  `json:"phases"`
	// ChangeToTable is how long serve takes from a binding claimed in
	// Gardener to the candidate table listing it.
	ChangeToTable PickTail `json:"changeToTable"`
	// CachedFill is the floor of a first fill read from the watch caches.
	CachedFill CachedFill `json:"cachedFillFloor"`
}

// measureSteady opens the job as serve does, starts watching, then times
// cycles (after one unmeasured one) and returns the median.
func measureSteady(ctx context.Context, restConfig *rest.Config, namespace, databaseURL string, cycles int) (Steady, error) {
	cfg := config.Default()
	if err := config.Parse([]byte(runConfig), &cfg); err != nil {
		return Steady{}, fmt.Errorf("steady: config: %w", err)
	}
	cfg.Namespace = namespace
	if err := cfg.Resolve(); err != nil {
		return Steady{}, fmt.Errorf("steady: config: %w", err)
	}
	log := &testbed.SyncBuffer{}
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	notify, changes := app.Changes()

	// The first fill is opening the job as serve does, watching, until the
	// watch holds the first full list; connecting to PostgreSQL is a
	// small part of it.
	before := liveHeap()
	start := time.Now()
	env, err := app.Open(ctx, app.Inputs{
		Config: cfg, RESTConfig: restConfig, DatabaseURL: databaseURL,
		Getenv: func(string) string { return "" }, Log: jsonLogger(log),
		Watch: &app.Watch{Context: watchCtx, Options: []gardener.WatchOption{gardener.WithChanges(notify)}},
	}, app.Needs{Gardener: true, Database: true, Migrate: true})
	if err != nil {
		return Steady{}, fmt.Errorf("steady: open: %w", err)
	}
	defer env.Close()
	if err := env.WaitForGardener(ctx); err != nil {
		return Steady{}, fmt.Errorf("steady: %w", err)
	}
	s := Steady{FirstFill: since(start), Cycles: cycles}
	s.CacheHeapMB = float64(int64(liveHeap())-int64(before)) / (1 << 20)

	type cycle struct {
		wall, cpu Seconds
		phases    Phases
	}
	var measured []cycle
	for i := range cycles + 1 {
		log.Reset()
		cpu := processCPU()
		start := time.Now()
		if err := env.Runner.Run(ctx, jobs.Options{Jobs: jobs.AllJobs, DryRun: jobs.DryRunRelease}); err != nil {
			return Steady{}, fmt.Errorf("steady: cycle %d: %w", i+1, err)
		}
		end := time.Now()
		c := cycle{wall: Seconds(end.Sub(start).Seconds()), cpu: processCPU() - cpu}
		if c.phases, err = parsePhases(log.Bytes(), start, end); err != nil {
			return Steady{}, fmt.Errorf("steady: cycle %d: %w", i+1, err)
		}
		if i > 0 {
			measured = append(measured, c)
		}
	}
	sort.Slice(measured, func(i, j int) bool { return measured[i].wall < measured[j].wall })
	median := measured[len(measured)/2]
	s.Wall, s.CPU, s.Phases = median.wall, median.cpu, median.phases
	if s.ChangeToTable, err = measureChangeToTable(ctx, env, changes, restConfig, namespace, databaseURL); err != nil {
		return Steady{}, fmt.Errorf("steady: change to table: %w", err)
	}
	return s, nil
}

// jsonLogger logs as the CLI does (internal/logging: KEB's keys and
// levels) at debug level, so the cycle's phases are read from its log
// exactly as a run's are.
func jsonLogger(w zapcore.WriteSyncer) *zap.Logger {
	return logging.New(w, zapcore.DebugLevel)
}

// liveHeap is the heap still in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// processCPU is the user plus system time this process used so far.
func processCPU() Seconds {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return timeval(u.Utime) + timeval(u.Stime)
}
