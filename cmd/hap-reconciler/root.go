package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/redact"
)

// globals are the flags every command shares.
type globals struct {
	configFile  string
	kubeconfig  string
	databaseURL string
	// overrides are the flags that override a key of the configuration
	// file, the commands' own included.
	overrides overrides
	logLevel  string
	// logFormat is --log-format: auto, json or text (see logFormats).
	logFormat string
	// gardenerFiles replace the Gardener API with kubectl exports.
	gardenerFiles []string

	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
	// logs is where the log lines go: stdout, as KEB logs, except for the
	// commands whose stdout is their output (see logStream).
	logs io.Writer
}

// flagConfig is the flag naming the configuration file.
const flagConfig = "config"

func execute(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	g := &globals{getenv: getenv, stdout: stdout, stderr: stderr, logs: stdout}
	// Chosen from the command name before cobra parses the flags, so that a
	// flag error of report or pools is logged where their other lines go.
	if len(args) > 0 {
		g.logs = logStream(args[0], stdout, stderr)
	}
	root := &cobra.Command{
		Use:   "hap-reconciler",
		Short: "Keeps KEB's Hyperscaler Account Pool honest and cheap",
		Long: "hap-reconciler runs beside KEB (Kyma Environment Broker) and keeps its\n" +
			"Hyperscaler Account Pool honest and cheap.\n\n" + jobsHelp(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	f := root.PersistentFlags()
	f.StringVar(&g.configFile, flagConfig, "", "configuration file (YAML); defaults apply to every key it leaves out")
	f.StringVar(&g.kubeconfig, "kubeconfig", "", "kubeconfig of the Gardener project; empty: $KUBECONFIG, else in-cluster")
	f.StringVar(&g.overrides.namespace, "namespace", "", "Gardener project namespace, e.g. garden-kyma-prod (overrides namespace in the configuration file)")
	f.StringVar(&g.databaseURL, "database-url", "", "KEB's PostgreSQL URL; empty: $DATABASE_URL, else KEB's APP_DATABASE_* variables")
	f.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&g.logFormat, "log-format", logAuto, "log lines as json (KEB's shape) or text; auto: text at a terminal, else json (a pod logs json)")
	f.StringArrayVar(&g.gardenerFiles, "gardener-file", nil, "read shoots and credentials bindings from `FILE`, the output of "+
		"kubectl get shoots,credentialsbindings -n NS -o json (or -o yaml), instead of the Gardener API (repeatable; nothing is written to Gardener)")
	_ = root.MarkPersistentFlagFilename(flagConfig, "yaml", "yml")
	_ = root.MarkPersistentFlagFilename("gardener-file", "json", "yaml", "yml")
	completeValues(root, "log-level", "debug", "info", "warn", "error")
	completeValues(root, "log-format", logFormats...)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		g.logs = logStream(cmd.Name(), stdout, stderr)
		if printsData(cmd) {
			g.logs = stderr
		}
		if err := checkLogFormat(g.logFormat); err != nil {
			return err
		}
		return g.checkGardenerFiles(cmd)
	}

	migrate, version := migrateCmd(g), versionCmd(g)
	hideInherited(root, migrate, gardenerFlags...)
	hideInherited(root, version, append([]string{flagConfig, "database-url"}, gardenerFlags...)...)
	root.AddCommand(migrate, runCmd(g), serveCmd(g), reportCmd(g), poolsCmd(g), checkCmd(g), undoReleaseCmd(g), configCmd(g), version)
	err := root.ExecuteContext(ctx)
	code := exitCode(err)
	if err != nil {
		writeErrorLine(g.logs, g.logFormat, withArgsRedacted(err, args), code)
	}
	return code
}

// printsData says whether cmd prints JSON or YAML on stdout (-o json or
// yaml), which then holds nothing else: its logs go to stderr.
func printsData(cmd *cobra.Command) bool {
	o := cmd.Flags().Lookup("output")
	return o != nil && (o.Value.String() == outputJSON || o.Value.String() == outputYAML)
}

// hideInherited keeps the shared flags names out of cmd's help, for a
// command they do not apply to (version reads nothing; migrate does not ask
// Gardener). They are still accepted, and ignored, so that one set of
// flags can be passed to every command.
func hideInherited(root, cmd *cobra.Command, names ...string) {
	for _, name := range names {
		f := *root.PersistentFlags().Lookup(name) // a copy, sharing the value
		f.Hidden = true
		cmd.Flags().AddFlag(&f)
	}
}

// gardenerFlags are the shared flags that say how to reach Gardener.
var gardenerFlags = []string{"kubeconfig", "namespace", "gardener-file"}

// withArgsRedacted hides the password of every argument that may hold one
// (an '@' or a password=) in err's text: a connection string given where a
// command or another flag's value was expected comes back in cobra's
// message ("unknown command ...", "invalid argument ...").
func withArgsRedacted(err error, args []string) error {
	msg := err.Error()
	for _, arg := range args {
		if !strings.Contains(arg, "@") && !strings.Contains(strings.ToLower(arg), "password") {
			continue
		}
		msg = strings.ReplaceAll(msg, arg, redact.String(arg))
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// load reads the configuration, with KEB's multi-account variables from the
// environment when the file has no such block, resolved once (KEB's policy
// and rules, each job's settings, the schedules: config.LoadWithEnv), and
// applies the flags that override it. Everything after reads the result.
func (g *globals) load() (config.Config, error) {
	cfg, err := config.LoadWithEnv(g.configFile)
	if err != nil {
		return cfg, err
	}
	g.overrides.apply(&cfg)
	// A flag that overrides a key is checked as the key is.
	if err := config.CheckPushgatewayURL("--pushgateway-url", g.overrides.pushgatewayURL); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// overrides are the flags that override a key of the configuration file,
// each a command's: set, the flag wins; not set, the file's value (or its
// default) stands. apply is the one place that settles it.
type overrides struct {
	namespace      string        // --namespace: namespace
	pushgatewayURL string        // run --pushgateway-url: metrics.pushgatewayURL
	listen         string        // serve --listen: metrics.listen
	since          time.Duration // report --since: shadow.window, how far back the report counts KEB's picks
}

// apply writes the flags that are set over cfg.
func (o overrides) apply(cfg *config.Config) {
	if o.namespace != "" {
		cfg.Namespace = o.namespace
	}
	if o.pushgatewayURL != "" {
		cfg.Metrics.PushgatewayURL = o.pushgatewayURL
	}
	if o.listen != "" {
		cfg.Metrics.Listen = o.listen
	}
	if o.since > 0 {
		cfg.Jobs.Shadow.Window.Duration = o.since
	}
}

func (g *globals) requireNamespace(cfg config.Config) error {
	if strings.TrimSpace(cfg.Namespace) == "" {
		return usageError{fmt.Errorf("no Gardener namespace: set --namespace or `namespace` in the configuration file")}
	}
	return nil
}

// logger writes lines shaped like KEB's (see newLogger) to the command's
// log stream.
func (g *globals) logger() (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(g.logLevel)
	if err != nil {
		return nil, usageError{fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", g.logLevel)}
	}
	return newLogger(g.logs, g.logFormat, level), nil
}

// jobsHelp lists the registry's jobs in run order, each with what it does.
func jobsHelp() string {
	var b strings.Builder
	b.WriteString("Jobs, in run order: " + strings.Join(jobs.AllJobs, ", ") + ".\n")
	width := 0
	for _, j := range jobs.Registry {
		width = max(width, len(j.Name))
	}
	for _, j := range jobs.Registry {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, j.Name, j.Does)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
