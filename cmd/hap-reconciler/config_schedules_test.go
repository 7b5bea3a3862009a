package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A schedule of a job that does not exist, or that is not a cron
// expression, stops every command at start with exit 2, naming the key and
// the value: the jobs' registry checks what config alone cannot.
func TestSchedulesAreCheckedAgainstTheJobsAtStart(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"schedules:\n  purge: \"@hourly\"\n", "schedules.purge: names no job (known: drift, candidates, shadow, release, metrics)"},
		{"schedules:\n  drift: every ten minutes\n", `schedules.drift: is not a cron schedule`},
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
