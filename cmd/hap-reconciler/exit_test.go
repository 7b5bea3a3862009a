package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
)

// Every configuration or usage error exits 2 with one line naming what to
// correct, before anything is asked of Gardener or the database; a command
// that ran and failed exits 1. None needs the test bed: nothing listens
// where they point.
func TestEveryConfigurationOrUsageErrorExits2(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster, whatever runs the test
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeFile(t, kubeconfig, "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://"+closedAddress(t)+"'}}]\n"+
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n")
	unreachable := "postgres://keb@" + closedAddress(t) + "/keb?sslmode=disable&connect_timeout=5"
	withPolicy := filepath.Join(dir, "policy.yaml")
	writeFile(t, withPolicy, plantedConfig)
	inPublic := filepath.Join(dir, "public.yaml")
	writeFile(t, inPublic, "database: {schema: public}\n")
	kebVars := map[string]string{"APP_DATABASE_HOST": "127.0.0.1", "APP_DATABASE_USER": "keb", "APP_DATABASE_NAME": "keb", "APP_DATABASE_PASSWORD": thePassword}
	with := func(extra map[string]string) map[string]string {
		env := map[string]string{}
		for k, v := range kebVars {
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		return env
	}
	ns := []string{"--namespace", "garden-x", "--config", withPolicy}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
		code int
	}{
		{"no database configured", nil, []string{"migrate"}, "no database configured: set --database-url, DATABASE_URL", exitUsage},
		{"bad APP_DATABASE_SSLMODE", with(map[string]string{"APP_DATABASE_SSLMODE": "on"}), []string{"report"}, `APP_DATABASE_SSLMODE "on": want one of`, exitUsage},
		{"bad APP_DATABASE_PORT", with(map[string]string{"APP_DATABASE_PORT": "54x"}), []string{"migrate"}, `APP_DATABASE_PORT "54x"`, exitUsage},
		{"APP_DATABASE_USER missing", with(map[string]string{"APP_DATABASE_USER": ""}), []string{"migrate"}, "APP_DATABASE_USER is empty", exitUsage},
		{"misspelt scheme in --database-url", nil, []string{"migrate", "--database-url", "postgress://keb:" + thePassword + "@host/keb"},
			`--database-url: database URL postgress://keb:xxxxx@host/keb: scheme "postgress"`, exitUsage},
		{"another database's URL", nil, []string{"report", "--database-url", "mysql://u:" + thePassword + "@h/db"}, `scheme "mysql"`, exitUsage},
		{"user:password@host in DATABASE_URL", map[string]string{"DATABASE_URL": "keb:" + thePassword + "@host"}, []string{"report"},
			"DATABASE_URL: database URL keb:xxxxx@host: want postgres://", exitUsage},
		{"unescaped password", nil, []string{"migrate", "--database-url", "postgres://keb:" + thePassword + "/x@host/keb"}, "must be percent-encoded", exitUsage},
		{"missing kubeconfig file", nil, append([]string{"run", "--kubeconfig", missing, "--database-url", unreachable}, ns...),
			"--kubeconfig: load kubeconfig", exitUsage},
		{"missing kubeconfig file, check", nil, append([]string{"check", "--kubeconfig", missing, "--database-url", unreachable}, ns...),
			"--kubeconfig: load kubeconfig", exitUsage},
		{"no kubeconfig outside a cluster", nil, append([]string{"serve", "--database-url", unreachable}, ns...),
			"--kubeconfig: no kubeconfig given and KUBECONFIG unset", exitUsage},
		{"no namespace", nil, []string{"run", "--config", withPolicy}, "no Gardener namespace", exitUsage},
		{"no policy, run writing the table", nil, []string{"run", "--namespace", "garden-x", "--kubeconfig", kubeconfig, "--database-url", unreachable},
			"pass --allow-no-keb-policy", exitUsage},
		{"no policy, serve", nil, []string{"serve", "--namespace", "garden-x", "--kubeconfig", kubeconfig, "--database-url", unreachable},
			"pass --allow-no-keb-policy", exitUsage},
		{"unreadable --config", nil, []string{"run", "--config", missing}, "--config: cannot read the file", exitUsage},
		{"unknown job", nil, []string{"run", "--jobs", "bogus"}, `--jobs: unknown job "bogus"`, exitUsage},
		{"unknown flag", nil, []string{"run", "--bogus"}, "unknown flag: --bogus", exitUsage},
		{"unknown command", nil, []string{"bogus"}, `unknown command "bogus"`, exitUsage},
		{"an argument no command takes", nil, []string{"report", "extra"}, `unknown command "extra"`, exitUsage},
		{"bad -o", nil, []string{"pools", "-o", "xml"}, `-o: "xml" is not one of table, wide, json, yaml`, exitUsage},
		{"bad --log-format", nil, []string{"migrate", "--log-format", "pretty"}, `--log-format: "pretty" is not one of auto, json, text`, exitUsage},
		{"bad --log-level", nil, []string{"migrate", "--log-level", "loud"}, "--log-level", exitUsage},
		{"KEB's schema for the job's tables", nil, []string{"migrate", "--config", inPublic, "--database-url", unreachable},
			`database.schema: must be a schema of the job's own: public holds KEB's tables and KEB's schema_migrations, got "public"`, exitUsage},
		{"--down 0", nil, []string{"migrate", "--down", "0", "--database-url", unreachable}, "--down 0: want the number of migrations to revert", exitUsage},
		{"bad --since", nil, []string{"report", "--shadow", "--since", "a week"}, `invalid argument "a week" for "--since"`, exitUsage},
		{"a URL where a command was expected", nil, []string{"migrate", "postgres://keb:" + thePassword + "@host/keb"},
			`unknown command "postgres://keb:xxxxx@host/keb"`, exitUsage},
		{"a URL where a duration was expected", nil, []string{"report", "--since", "keb:" + thePassword + "@h"},
			`invalid argument "keb:xxxxx@h" for "--since"`, exitUsage},
		{"--gardener-file with run", nil, []string{"run", "--dry-run", "--gardener-file", missing}, "--gardener-file: run writes", exitUsage},

		// What ran and failed.
		{"unreachable database", nil, []string{"migrate", "--database-url", unreachable}, "cannot reach KEB's database", exitFailed},
		{"unreachable database, run", nil, []string{"run", "--dry-run", "--namespace", "garden-x", "--kubeconfig", kubeconfig, "--database-url", unreachable},
			"cannot reach KEB's database", exitFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, line := execEnv(t, c.env, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d: %s", code, c.code, line)
			}
			if !strings.Contains(line, c.want) {
				t.Errorf("%q does not say %q", line, c.want)
			}
			if strings.Contains(line, thePassword) {
				t.Errorf("%q shows the password", line)
			}
		})
	}
}

func TestExitCodeOfEachKindOfError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{&config.Error{Key: "limits.aws", Reason: "negative"}, exitUsage},
		{usageError{errors.New("--jobs: unknown job")}, exitUsage},
		{&app.InputError{Flag: "--kubeconfig", Err: errors.New("no such file")}, exitUsage},
		{fmt.Errorf("opening: %w", &app.InputError{Err: errors.New("no database configured")}), exitUsage},
		{errors.New(`unknown command "x" for "hap-reconciler"`), exitUsage},
		{errors.New("run failed: the picture is incomplete"), exitFailed},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// thePassword stands for a password; nothing else in the cases spells it.
const thePassword = "S3cr3tPw"

// execEnv runs hap-reconciler in-process with args and the environment env
// alone, and returns its exit code and the message of its last log line.
func execEnv(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	code := execute(ctx, args, &out, &errOut, func(k string) string { return env[k] })
	lines := strings.Split(strings.TrimSpace(out.String()+errOut.String()), "\n")
	var last struct {
		Msg string `json:"msg"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("the last line is not JSON: %q", lines[len(lines)-1])
	}
	return code, last.Msg
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
