package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// help returns what `hap-reconciler args... --help` prints.
func help(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := execute(context.Background(), append(args, "--help"), &out, &errOut, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("%v --help: exit %d\n%s%s", args, code, out.String(), errOut.String())
	}
	return out.String()
}

// The help names every job of the registry, so a job added there cannot be
// left out of what an operator reads.
func TestHelpNamesEveryJob(t *testing.T) {
	root := help(t)
	for _, j := range jobs.Registry {
		line := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(j.Name) + ` +` + regexp.QuoteMeta(j.Does) + `$`)
		if j.Does == "" || !line.MatchString(root) {
			t.Errorf("hap-reconciler --help does not say what job %q does (want its line %q):\n%s", j.Name, j.Name+"  "+j.Does, root)
		}
	}
	if want := "Jobs, in run order: " + strings.Join(jobs.AllJobs, ", ") + "."; !strings.Contains(root, want) {
		t.Errorf("hap-reconciler --help lacks %q:\n%s", want, root)
	}

	run := help(t, "run")
	flag := regexp.MustCompile(`--jobs string\s+comma-separated jobs to run: (\S+) \(default all\)`).FindStringSubmatch(run)
	if flag == nil {
		t.Fatalf("run --help has no --jobs line listing the jobs:\n%s", run)
	}
	if got, want := flag[1], strings.Join(jobs.AllJobs, ","); got != want {
		t.Errorf("run --help lists the jobs %s, the registry %s", got, want)
	}
}
