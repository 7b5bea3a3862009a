package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// The tests of this file run the built binary as an operator does, at a
// terminal (a pty) where what it prints depends on one.

// runBinary runs the built hap-reconciler with args and env (added to the
// test's own), its stdout and stderr pipes, and returns its exit code and
// both.
func runBinary(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if binary == "" {
		t.Skip("the binary is not built (-short)")
	}
	cmd := exec.CommandContext(testContext(t), binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	return exitOf(t, cmd.Run()), out.String(), errOut.String()
}

// runAtTerminal runs the built hap-reconciler with args, its stdin, stdout
// and stderr a terminal, and returns its exit code and what the terminal
// showed, line ends as written.
func runAtTerminal(t *testing.T, args ...string) (code int, shown string) {
	t.Helper()
	if binary == "" {
		t.Skip("the binary is not built (-short)")
	}
	cmd := exec.CommandContext(testContext(t), binary, args...)
	cmd.Env = cleanEnv()
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("starting hap-reconciler at a pty: %v", err)
	}
	defer tty.Close()
	var out bytes.Buffer
	// The read ends in EIO once the process exited and closed its side.
	if _, err := io.Copy(&out, tty); err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatalf("reading the pty: %v", err)
	}
	return exitOf(t, cmd.Wait()), strings.ReplaceAll(out.String(), "\r\n", "\n")
}

// cleanEnv is an environment without the variables the job reads (a
// DATABASE_URL of the shell running the tests would change what they see).
func cleanEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TERM=dumb"}
}

func exitOf(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	t.Fatalf("running hap-reconciler: %v", err)
	return -1
}

// isJSONLine says whether s is one JSON log line at ERROR.
func isJSONLine(s string) bool {
	var entry struct {
		Level string `json:"level"`
		Msg   string `json:"msg"`
	}
	s = strings.TrimSpace(s)
	return !strings.Contains(s, "\n") && json.Unmarshal([]byte(s), &entry) == nil && entry.Level == "ERROR"
}

// At a terminal an error is one plain line a person reads, a usage error
// and a failed run alike; --log-format json, or a stream that is no
// terminal (a pod's), keeps KEB's JSON line that log queries find.
func TestAnErrorAtATerminalIsOnePlainLine(t *testing.T) {
	unreachable := "postgres://keb:hunter2@" + closedAddress(t) + "/keb?connect_timeout=5"
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"usage error", []string{"pools", "-o", "xml"}, exitUsage, `hap-reconciler: -o: "xml" is not one of table, wide, json, yaml`},
		{"failed run", []string{"migrate", "--database-url", unreachable}, exitFailed, "hap-reconciler: cannot reach KEB's database"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, shown := runAtTerminal(t, c.args...)
			line := strings.TrimSpace(shown)
			if code != c.code || strings.Contains(line, "\n") || !strings.HasPrefix(line, c.want) || isJSONLine(line) {
				t.Errorf("at a terminal: exit %d (want %d), want one plain line starting %q, got\n%s", code, c.code, c.want, shown)
			}
			if strings.Contains(shown, "hunter2") {
				t.Errorf("the password is shown:\n%s", shown)
			}
			code, shown = runAtTerminal(t, append(c.args, "--log-format", "json")...)
			if code != c.code || !isJSONLine(shown) {
				t.Errorf("at a terminal with --log-format json: exit %d, want one JSON line at ERROR, got\n%s", code, shown)
			}
			code, stdout, stderr := runBinary(t, nil, c.args...)
			if code != c.code || !isJSONLine(stdout+stderr) {
				t.Errorf("not at a terminal: exit %d, want one JSON line at ERROR, got\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// Completion offers the values a flag takes: the jobs of --jobs (those not
// listed yet, after a comma), the formats of -o, the log levels and formats.
func TestCompletionOffersFlagValues(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--jobs", ""}, []string{"drift", "candidates", "shadow", "release", "metrics"}},
		{[]string{"run", "--jobs", "drift,c"}, []string{"drift,candidates"}},
		{[]string{"serve", "--log-level", ""}, []string{"debug", "info", "warn", "error"}},
		{[]string{"migrate", "--log-format", ""}, []string{"auto", "json", "text"}},
		{[]string{"report", "-o", ""}, []string{"table", "wide", "json", "yaml"}},
		{[]string{"pools", "--output", "y"}, []string{"yaml"}},
		{[]string{"check", "-o", ""}, []string{"log", "json", "yaml"}},
		{[]string{"config", "view", "-o", ""}, []string{"yaml", "json"}},
	}
	for _, c := range cases {
		code, stdout, stderr := runBinary(t, nil, append([]string{"__complete"}, c.args...)...)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			if !strings.HasPrefix(line, ":") { // the directive
				got = append(got, line)
			}
		}
		if code != 0 || strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("completing %q: exit %d, got %q, want %q\n%s", c.args, code, got, c.want, stderr)
		}
	}
}

// The help says what applies to the command it is for: serve's dry-run
// flags speak of scheduled runs, not of run's; version and migrate do not
// list the flags that reach Gardener, which they never ask (migrate still
// takes them, ignored, so that one set of flags fits every command).
func TestHelpSaysOnlyWhatApplies(t *testing.T) {
	help := func(args ...string) string {
		code, stdout, stderr := runBinary(t, nil, append(args, "--help")...)
		if code != 0 {
			t.Fatalf("%v --help: exit %d\n%s", args, code, stderr)
		}
		return stdout
	}
	serve := help("serve")
	if strings.Contains(serve, "run --dry-run") || !strings.Contains(serve, "serve --dry-run applies no migration") ||
		!strings.Contains(serve, "every scheduled release decides") {
		t.Errorf("serve --help speaks of run's dry run, or not of its own:\n%s", serve)
	}
	if run := help("run"); !strings.Contains(run, "run --dry-run applies no migration") || !strings.Contains(run, "--kubeconfig") {
		t.Errorf("run --help lost its own dry-run text or the Gardener flags:\n%s", run)
	}
	for _, cmd := range []string{"version", "migrate"} {
		text := help(cmd)
		for _, flag := range []string{"--kubeconfig", "--namespace", "--gardener-file"} {
			if strings.Contains(text, flag) {
				t.Errorf("%s --help lists %s, which it does not use:\n%s", cmd, flag, text)
			}
		}
	}
	if version := help("version"); strings.Contains(version, "--database-url") || strings.Contains(version, "--config") {
		t.Errorf("version --help lists flags of the commands that read a database:\n%s", version)
	}
	if migrate := help("migrate"); !strings.Contains(migrate, "--database-url") {
		t.Errorf("migrate --help lost --database-url:\n%s", migrate)
	}
	// Still accepted: the chart's and the scripts' common flags.
	code, stdout, stderr := runBinary(t, nil, "migrate", "--namespace", "garden-x", "--kubeconfig", "/nonexistent", "--down", "0")
	if code != exitUsage || !strings.Contains(stdout+stderr, "--down 0: want the number of migrations to revert") {
		t.Errorf("migrate refuses the Gardener flags: exit %d\n%s%s", code, stdout, stderr)
	}
}

// config view prints the configuration every command resolves: the file
// over the defaults, the flags that override a key, every job's settings
// and schedule, and the database URL with where it came from, passwords
// hidden wherever they stand.
func TestConfigViewPrintsTheResolvedConfigurationWithoutSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	const fileText = "namespace: garden-from-file\nmetrics:\n  pushgatewayURL: http://pusher:gwsecret@pushgateway:9091\n" +
		"release:\n  gracePeriod: 2h\nschedules:\n  drift: '@every 1h'\nretention:\n  resolvedFindings: 48h\n"
	if err := os.WriteFile(file, []byte(fileText), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"config", "view", "--config", file, "--namespace", "garden-from-flag"}
	code, stdout, stderr := runBinary(t, []string{"DATABASE_URL=postgres://keb:dbsecret@db.example:5432/keb"}, args...)
	if code != 0 {
		t.Fatalf("config view: exit %d\n%s", code, stderr)
	}
	for _, secret := range []string{"gwsecret", "dbsecret"} {
		if strings.Contains(stdout+stderr, secret) {
			t.Errorf("config view shows the password %s:\n%s", secret, stdout)
		}
	}
	var view struct {
		Namespace string `json:"namespace"`
		Database  struct {
			URL       string `json:"url"`
			URLSource string `json:"urlSource"`
			Schema    string `json:"schema"`
		} `json:"database"`
		Metrics struct {
			PushgatewayURL string `json:"pushgatewayURL"`
		} `json:"metrics"`
		Release struct {
			GracePeriod string `json:"gracePeriod"`
			MaxPerRun   int    `json:"maxPerRun"`
		} `json:"release"`
		Schedules map[string]string `json:"schedules"`
		Retention struct {
			ResolvedFindings string `json:"resolvedFindings"`
			ReleaseAudit     string `json:"releaseAudit"`
			PoolHistory      string `json:"poolHistory"`
		} `json:"retention"`
		KEBModule struct {
			SchemaNewest int `json:"schemaNewest"`
		} `json:"kebModule"`
	}
	decodeYAML(t, stdout, &view)
	if view.Retention.ResolvedFindings != "48h0m0s" || view.Retention.ReleaseAudit != "2160h0m0s" || view.Retention.PoolHistory != "2160h0m0s" ||
		view.KEBModule.SchemaNewest != schema.Newest {
		t.Errorf("config view: retention %+v and kebModule %+v, want the file's over the defaults", view.Retention, view.KEBModule)
	}
	if view.Namespace != "garden-from-flag" || view.Database.URL != "postgres://keb:xxxxx@db.example:5432/keb" || view.Database.URLSource != "DATABASE_URL" ||
		view.Database.Schema != "hap" || view.Metrics.PushgatewayURL != "http://pusher:xxxxx@pushgateway:9091" ||
		view.Release.GracePeriod != "2h0m0s" || view.Release.MaxPerRun != 10 || view.Schedules["drift"] != "@every 1h" || view.Schedules["candidates"] == "" {
		t.Errorf("config view, as resolved: %+v\n%s", view, stdout)
	}

	// KEB's variables, the password among them, and JSON.
	code, stdout, stderr = runBinary(t, []string{"APP_DATABASE_HOST=db.example", "APP_DATABASE_USER=keb", "APP_DATABASE_PASSWORD=kebsecret",
		"APP_DATABASE_NAME=keb", "APP_DATABASE_PORT=5432"}, "config", "view", "-o", "json")
	if code != 0 || strings.Contains(stdout, "kebsecret") || json.Unmarshal([]byte(stdout), &view) != nil || view.Database.URLSource != "APP_DATABASE_*" {
		t.Errorf("config view -o json with KEB's APP_DATABASE_* variables: exit %d, source %q\n%s%s", code, view.Database.URLSource, stdout, stderr)
	}
}
