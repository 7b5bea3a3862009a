// Command hap-bench loads generated landscapes into a fresh test bed and
// measures hap-reconciler on them (see package bench and
// docs/benchmarks.md). `make bench` runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/kyma-project/hap-reconciler/test/bench"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hap-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		sizes   = flag.String("sizes", envOr("BENCH_SIZES", "S,M,L"), "comma-separated sizes: S (2,000 shoots), M (10,000), L (20,000), XL (100,000; at most 3 run/floor pairs) or a number of shoots; env BENCH_SIZES")
		picks   = flag.Int("picks", envInt("BENCH_PICKS", 10000), "measured picks per path and size; env BENCH_PICKS")
		every   = flag.Int("table-rewrite-every", bench.DefaultTableRewriteEvery, "one-query picks between two rewrites of the candidate table by the candidates job")
		budget  = flag.Duration("live-budget", 3*time.Minute, "time after which each KEB live path stops picking early (its lists make 10,000 picks take hours at L); 0: no limit")
		repeats = flag.Int("repeats", 5, "measured runs and floors per size (median reported); XL measures at most 3")
		cycles  = flag.Int("cycles", 5, "measured watched serve cycles per size (median reported)")
		seed    = flag.Uint64("seed", 2000, "landscape seed")
		binary  = flag.String("binary", "", "hap-reconciler binary to measure (default: build ./cmd/hap-reconciler)")
		out     = flag.String("out", "test/bench/results", "directory for the JSON results")
		onlyRW  = flag.Bool("rewrites-only", false, "measure only the picks while the candidate table is rewritten (no landscape sizes)")
	)
	flag.Parse()
	var parsed []bench.Size
	var err error
	if !*onlyRW {
		if parsed, err = bench.ParseSizes(*sizes); err != nil {
			return err
		}
	}
	// Ctrl-C must still stop the test bed's servers.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	work, err := os.MkdirTemp("", "hap-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if *binary == "" {
		*binary = filepath.Join(work, "hap-reconciler")
		fmt.Fprintln(os.Stderr, "building hap-reconciler")
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", *binary, "./cmd/hap-reconciler")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build hap-reconciler (run from the repository root): %w", err)
		}
	}
	if *binary, err = filepath.Abs(*binary); err != nil {
		return err
	}

	fmt.Fprintln(os.Stderr, "starting the test bed (etcd, kube-apiserver, gardener-apiserver, PostgreSQL)")
	startCtx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	bedArgs := bench.ServerArgs(parsed)
	bed, err := testbed.StartBed(startCtx, bench.BedOptions(parsed)...)
	cancel()
	if err != nil {
		return err
	}
	report, err := bench.Measure(ctx, bed, bench.Options{
		Sizes: parsed, Picks: *picks, TableRewriteEvery: *every, LiveBudget: *budget, Repeats: *repeats, SteadyCycles: *cycles, Seed: *seed,
		Binary: *binary, WorkDir: work, Progress: os.Stderr, Rewrites: bench.DefaultRewriteLoad, APIServerArgs: bedArgs,
	})
	err = errors.Join(err, bed.Stop())
	if err != nil {
		return err
	}
	if err := bench.PrintTable(os.Stdout, report); err != nil {
		return err
	}
	return writeJSON(*out, report)
}

// writeJSON stores the report as <out>/<UTC time>.json.
func writeJSON(dir string, r *bench.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, r.Taken.Format("2006-01-02T150405Z")+".json")
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "\nwrote", path)
	return nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func envInt(key string, fallback int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return fallback
}
