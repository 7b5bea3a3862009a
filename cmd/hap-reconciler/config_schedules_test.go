package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// A schedule of a job that does not exist, or that is not a cron
// expression, stops every command at start with exit 2, naming the key and
// the value: the jobs' registry checks what config alone cannot.
func TestSchedulesAreCheckedAgainstTheJobsAtStart(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"schedules:\n  purge: \"@hourly\"\n", "schedules.purge: names no job (known: " + strings.Join(jobs.AllJobs, ", ") + ")"},
		{"schedules:\n  drift: every ten minutes\n", `schedules.drift: is not a cron schedule`},
		// cron would run each of these every second.
		{"schedules:\n  drift: \"@every 0s\"\n", `schedules.drift: must be an interval of at least 1s, got \"@every 0s\"`},
		{"schedules:\n  release: \"@every -5m\"\n", `schedules.release: must be an interval of at least 1s, got \"@every -5m\"`},
		{"schedules:\n  metrics: \"@every 100ms\"\n", `schedules.metrics: must be an interval of at least 1s, got \"@every 100ms\"`},
	} {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(c.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"run", "serve"} {
			var out, errOut bytes.Buffer
			code := execute(context.Background(), []string{cmd, "--config", path, "--namespace", "garden-kyma"}, &out, &errOut,
				func(string) string { return "" })
			// run and serve log on stdout, the final error line included.
			if code != exitUsage || !strings.Contains(out.String(), c.want) {
				t.Errorf("%s with %q: exit %d, want %d and %q in\n%s", cmd, c.doc, code, exitUsage, c.want, out.String())
			}
		}
	}
}

// A Pushgateway URL a push could not reach stops run at start with exit 2,
// from the file or the flag, its password hidden; the run's work is never
// done only for every push to fail after it.
func TestAMalformedPushgatewayURLExits2AtStart(t *testing.T) {
	for _, c := range []struct{ doc, flag, want string }{
		{"metrics:\n  pushgatewayURL: pushgateway:9091\n", "", "metrics.pushgatewayURL: must be an absolute http(s) URL"},
		{"", "http://pushgateway.monitoring:90x1", "--pushgateway-url: must be an absolute http(s) URL"},
		{"", "ftp://pushgateway.monitoring:9091", "--pushgateway-url: must be an absolute http(s) URL"},
		{"", "http://user:S3cr3tPw@:9091", "--pushgateway-url: must be an absolute http(s) URL"},
	} {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(c.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"run", "--config", path, "--namespace", "garden-kyma"}
		if c.flag != "" {
			args = append(args, "--pushgateway-url", c.flag)
		}
		var out, errOut bytes.Buffer
		code := execute(context.Background(), args, &out, &errOut, func(string) string { return "" })
		if code != exitUsage || !strings.Contains(out.String(), c.want) || strings.Contains(out.String(), "S3cr3tPw") {
			t.Errorf("%v with %q: exit %d, want %d and %q, no password, in\n%s", args, c.doc, code, exitUsage, c.want, out.String())
		}
	}
}
