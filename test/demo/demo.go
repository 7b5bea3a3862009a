package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/report"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

type options struct {
	gardener string
	release  bool
	listen   string
	wait     bool
}

// usageError marks bad flags: exit 2, nothing started.
type usageError struct{ error }

// run is the demo's entry point: main calls it, and so does its test.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	opts, err := parseOptions(args, stderr, getenv)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = demo(ctx, opts, narrator{out: &lockedWriter{w: stdout}}, getenv)
	}
	var usage usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		fmt.Fprintln(stderr, "hap-demo:", err)
		return 2
	}
	fmt.Fprintln(stderr, "hap-demo:", err)
	return 1
}

func parseOptions(args []string, stderr io.Writer, getenv func(string) string) (options, error) {
	var o options
	fs := flag.NewFlagSet("hap-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.gardener, "gardener", sourceAuto, "where Gardener comes from: auto (the API when kube-apiserver and gardener-apiserver are built on this machine, "+
		"else an export file), api (builds them first when missing: about 20 minutes) or file")
	fs.BoolVar(&o.release, "release", getenv("DEMO_RELEASE") == "1", "release the idle binding for real instead of as a dry run "+
		"(default true when DEMO_RELEASE=1); needs the API")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to serve /metrics on while the demo runs")
	fs.BoolVar(&o.wait, "wait", true, "keep everything running until Ctrl-C, to look around; with --wait=false the demo cleans up after the report")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case o.gardener != sourceAuto && o.gardener != sourceAPI && o.gardener != sourceFile:
		return o, usageError{fmt.Errorf("--gardener: %q is not one of auto, api, file", o.gardener)}
	case o.release && o.gardener == sourceFile:
		return o, usageError{errors.New("--release needs the Gardener API: an export file cannot be changed; use --gardener api or auto")}
	}
	return o, nil
}

// demo brings up the embedded default, runs every job on it once, tells
// what came of it, and, with wait, keeps it all up until ctx ends. Whatever
// it started is undone before it returns.
func demo(ctx context.Context, opts options, n narrator, getenv func(string) string) (err error) {
	source, why := chooseSource(opts.gardener, getenv)
	if opts.release && source == sourceFile {
		return usageError{fmt.Errorf("--release needs the Gardener API, and %s", why)}
	}
	var undo cleanups
	defer func() { err = errors.Join(err, undo.run(n)) }()

	n.step("hap-reconciler demo: a throwaway KEB database and Gardener project holding a small landscape, every job run once on it")
	n.note("Gardener: %s", why)
	dir, err := os.MkdirTemp("", "hap-demo-")
	if err != nil {
		return err
	}
	undo.add("removed "+dir, func() error { return os.RemoveAll(dir) })
	n.note("working directory %s", dir)

	l := demoLandscape()
	databaseURL, err := startDatabase(ctx, n, &undo, l)
	if err != nil {
		return err
	}
	var g gardenerSource
	if source == sourceAPI {
		g, err = startAPI(ctx, n, &undo, l, getenv)
	} else {
		g, err = openExport(n, l, dir)
	}
	if err != nil {
		return err
	}

	configPath := filepath.Join(dir, "config.yaml")
	env, err := wire(ctx, n, &undo, configPath, g, databaseURL, getenv)
	if err != nil {
		return err
	}
	if err := backdatePoolHistory(ctx, n, env, l); err != nil {
		return err
	}
	if err := runJobs(ctx, n, env, opts.release); err != nil {
		return err
	}
	rep, err := report.Stored(ctx, env.Reports, "")
	if err != nil {
		return err
	}
	n.step("The report, as `hap-reconciler report` prints it")
	if err := rep.WriteTable(n.out, report.Layout{}); err != nil {
		return err
	}
	if err := tellStory(ctx, n, env, rep, databaseURL); err != nil {
		return err
	}
	if err := showShadow(ctx, n, env, databaseURL); err != nil {
		return err
	}
	if err := showPools(ctx, n, env); err != nil {
		return err
	}
	metricsURL, stop, err := serveMetrics(env.Metrics.Registry, opts.listen)
	if err != nil {
		return usageError{err}
	}
	undo.add("stopped serving metrics", stop)
	if err := showMetrics(ctx, n, metricsURL); err != nil {
		return err
	}
	if !opts.wait {
		return nil
	}
	tryItYourself(n, configPath, databaseURL, g, metricsURL)
	n.step("Press Ctrl-C to stop the demo; it stops and removes everything it started")
	<-ctx.Done()
	return nil
}

// startDatabase starts PostgreSQL with KEB's instances table and fills it.
func startDatabase(ctx context.Context, n narrator, undo *cleanups, l *landscape.Landscape) (string, error) {
	n.step("Starting a throwaway PostgreSQL with KEB's instances table")
	pg, err := testbed.StartPostgres(ctx)
	if err != nil {
		return "", fmt.Errorf("starting PostgreSQL: %w", err)
	}
	undo.add("stopped PostgreSQL and removed its data", pg.Stop)
	url, err := pg.NewDatabase(ctx, "broker")
	if err != nil {
		return "", err
	}
	n.note("database %s", url)
	active := 0
	for _, i := range l.Instances {
		if i.Active() {
			active++
		}
	}
	n.step("Seeding KEB's instances table: %d rows, %d of them active", len(l.Instances), active)
	if err := landscape.LoadInstances(ctx, url, l); err != nil {
		return "", err
	}
	return url, nil
}

// wire writes the demo's configuration, opens the job on it as the CLI
// does, and backdates the idle binding so its grace period is over.
func wire(ctx context.Context, n narrator, undo *cleanups, configPath string, g gardenerSource, databaseURL string,
	getenv func(string) string) (*app.Env, error) {
	if err := os.WriteFile(configPath, []byte(demoConfig), 0o600); err != nil {
		return nil, err
	}
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, err
	}
	cfg.Namespace = g.namespace
	env, err := app.Open(ctx, app.Inputs{
		Config: cfg, RESTConfig: g.restConfig, Gardener: g.port, DatabaseURL: databaseURL, Getenv: getenv, Log: logger(n.out),
	}, app.Needs{Gardener: true, Database: true, Migrate: true})
	if err != nil {
		return nil, err
	}
	undo.add("closed the database connections", func() error { env.Close(); return nil })

	since := time.Now().Add(-idleFor)
	n.step("Backdating %s of GA %s: seen empty since %s, %s ago; the grace period is %s",
		idleBinding, idleGA, since.UTC().Format(time.RFC3339), idleFor, cfg.Jobs.Release.GracePeriod)
	n.note("(a real deployment learns this from its own earlier runs, in %s.binding_empty_since)", env.Store.Schema())
	err = env.Store.SaveEmptySince(ctx, map[string]hap.EmptySighting{idleBinding: {GlobalAccountID: idleGA, Since: since}})
	return env, err
}

func runJobs(ctx context.Context, n narrator, env *app.Env, release bool) error {
	mode := "release as a dry run (DEMO_RELEASE=1 or --release releases for real)"
	if release {
		mode = "release for real"
	}
	n.step("Running every job once (%s), %s", strings.Join(jobs.AllJobs, ", "), mode)
	dryRun := jobs.DryRunRelease
	if release {
		dryRun = jobs.NoDryRun
	}
	if err := env.Runner.Run(ctx, jobs.Options{Jobs: jobs.AllJobs, DryRun: dryRun}); err != nil {
		return fmt.Errorf("the run failed: %w", err)
	}
	return nil
}

func showMetrics(ctx context.Context, n narrator, url string) error {
	lines, err := metricsExcerpt(ctx, url)
	if err != nil {
		return err
	}
	n.step("Metrics: %s (the spread GA's series, the pools' free bindings, the release outcomes)", url)
	for _, line := range lines {
		n.note("%s", line)
	}
	return nil
}

func tryItYourself(n narrator, configPath, databaseURL string, g gardenerSource, metricsURL string) {
	gardenerFlags := "--kubeconfig " + g.kubeconfig + " --namespace " + g.namespace
	if g.file != "" {
		gardenerFlags = "--gardener-file " + g.file
	}
	n.step("Try it yourself while the demo runs (from the repository's root)")
	n.note("go run ./cmd/hap-reconciler report --config %s --database-url '%s'", configPath, databaseURL)
	n.note("go run ./cmd/hap-reconciler report --live --ga %s --config %s --database-url '%s' %s", spreadGA, configPath, databaseURL, gardenerFlags)
	n.note("curl -s %s | grep ^keb_", metricsURL)
}

// logger writes the job's logs into the story, debug included: that is
// where the lists say how many pages they took.
func logger(out io.Writer) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey, enc.CallerKey, enc.StacktraceKey = "", "", ""
	enc.ConsoleSeparator = "  "
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(out), zapcore.DebugLevel))
}
