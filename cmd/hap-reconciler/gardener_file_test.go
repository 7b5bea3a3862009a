package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/report"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

func TestReportLiveOnAKubectlExportEqualsTheLiveAPI(t *testing.T) {
	l := landscape.Generate(landscape.Options{Seed: 11, GlobalAccounts: 3})
	planted(l)
	s := load(t, l, plantedConfig)
	want := decodeReport(t, s.mustRun(t, "report", "--live", "-o", "json"))
	if len(want.Groups) == 0 || len(want.Other) == 0 {
		t.Fatalf("the live report shows too little to compare: %+v", want)
	}
	wantPools := s.mustRun(t, "pools", "--live", "-o", "json")

	kubectl := kubectlPath(t)
	dir := t.TempDir()
	exports := map[string][]string{
		"one JSON export of both kinds": {s.export(t, kubectl, dir, "all.json", "shoots,credentialsbindings", "json")},
		"one YAML export of both kinds": {s.export(t, kubectl, dir, "all.yaml", "shoots,credentialsbindings", "yaml")},
		"one file per kind": {
			s.export(t, kubectl, dir, "shoots.json", "shoots", "json"),
			s.export(t, kubectl, dir, "bindings.yaml", "credentialsbindings", "yaml"),
		},
	}
	for name, files := range exports {
		t.Run(name, func(t *testing.T) {
			// No namespace, and a kubeconfig that does not exist: nothing
			// may reach for Gardener.
			code, out, errOut := s.offline(t, files, "report", "--live", "-o", "json", "--kubeconfig", filepath.Join(dir, "no-such-kubeconfig"))
			if code != 0 {
				t.Fatalf("report --live --gardener-file: exit %d\n%s", code, errOut)
			}
			if got := decodeReport(t, out); !reflect.DeepEqual(got, want) {
				t.Errorf("report on the export differs from the live API's\n got %+v\nwant %+v", got, want)
			}
			code, out, errOut = s.offline(t, files, "pools", "--live", "-o", "json", "--kubeconfig", filepath.Join(dir, "no-such-kubeconfig"))
			if code != 0 || out != wantPools {
				t.Errorf("pools --live on the export: exit %d, differs from the live API's\n got %s\nwant %s\n%s", code, out, wantPools, errOut)
			}
		})
	}

	all := exports["one JSON export of both kinds"]
	refused := []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "--gardener-file: run writes the candidate table KEB provisions from"},
		{[]string{"run", "--dry-run", "--jobs", "drift,candidates"}, "analyse it with report --live --gardener-file"},
		{[]string{"serve"}, "--gardener-file: serve runs the jobs on schedules against the live Gardener API"},
		{[]string{"report"}, "--gardener-file: report reads the job's stored tables unless --live"},
		{[]string{"pools"}, "--gardener-file: pools reads the job's stored tables unless --live"},
	}
	for _, r := range refused {
		code, _, errOut := s.offline(t, all, r.args...)
		if code != exitUsage || !strings.Contains(errOut, r.want) {
			t.Errorf("%v with --gardener-file: exit %d, want %d and %q in\n%s", r.args, code, exitUsage, r.want, errOut)
		}
	}
	var n int
	if err := s.db(t).QueryRow(testContext(t), `SELECT count(*) FROM pg_namespace WHERE nspname = 'hap'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("a refused run must not even migrate: schema hap exists %d time(s), %v", n, err)
	}
}

// offline runs the CLI on export files instead of the Gardener API: with
// the scene's configuration and database, and neither namespace nor
// kubeconfig.
func (s *scene) offline(t *testing.T, files []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	all := append(args, "--config", s.ConfigPath, "--database-url", s.World.DatabaseURL)
	for _, f := range files {
		all = append(all, "--gardener-file", f)
	}
	return execCLI(t, all...)
}

// export writes what `kubectl get KINDS -n NS -o FORMAT` prints about the
// scene's namespace to dir/name.
func (s *scene) export(t *testing.T, kubectl, dir, name, kinds, format string) string {
	t.Helper()
	cmd := exec.CommandContext(testContext(t), kubectl, "--kubeconfig", bed.Kube.KubeconfigPath(),
		"get", kinds, "-n", s.World.Namespace, "-o", format)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl get %s: %v\n%s", kinds, err, stderr.String())
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubectlPath returns kubectl, as the repository's install script finds or
// builds it: CI may run on a fresh machine.
func kubectlPath(t *testing.T) string {
	t.Helper()
	cmd := exec.CommandContext(testContext(t), "bash", filepath.Join("..", "..", "hack", "install-kubectl.sh"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/install-kubectl.sh: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// decodeReport reads report -o json, without the time it was computed.
func decodeReport(t *testing.T, out string) report.Report {
	t.Helper()
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report -o json: %v\n%s", err, out)
	}
	rep.ComputedAt = time.Time{}
	return rep
}
