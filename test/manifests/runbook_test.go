package manifests_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const deploymentGuide = "../../docs/deployment.md"

// kubectlNamespace finds a kubectl command's namespace flag.
var kubectlNamespace = regexp.MustCompile(`(?:-n|--namespace)[ =]("\$NS"|[a-z0-9-]+)`)

// garden are the kinds that live in the Gardener project namespace ($NS in
// the runbook): what the job reads and releases, and the Role the chart puts
// there for in-cluster credentials.
var garden = regexp.MustCompile(`credentialsbinding|shoots|role,rolebinding`)

// Every kubectl command of the runbook addresses the namespace its objects
// are in: the job's own (Deployment, CronJob, pods, ConfigMap) the one the
// documented install renders them into, the project's bindings and shoots
// $NS. The runbook once sent an operator to "$NS" for the job's pods, which
// the chart installs into kcp-system.
func TestTheRunbookAddressesTheChartsNamespace(t *testing.T) {
	install := installNamespace(t)
	_, objs := render(t, helmBin(t), install, project...)
	jobNamespace := find(t, objs, "Deployment", releaseName).GetNamespace()
	runbook, err := os.ReadFile(runbookFile)
	if err != nil {
		t.Fatal(err)
	}
	commands := kubectlCommands(string(runbook))
	if len(commands) < 10 {
		t.Fatalf("found %d kubectl commands in %s: the test reads the runbook wrongly", len(commands), runbookFile)
	}
	for _, c := range commands {
		m := kubectlNamespace.FindStringSubmatch(c)
		want := jobNamespace
		if garden.MatchString(c) {
			want = `"$NS"`
		}
		if m == nil || m[1] != want {
			t.Errorf("%s: %q: want -n %s", runbookFile, c, want)
		}
	}
}

// installNamespace is the namespace docs/deployment.md installs the chart
// into (helm upgrade --install ... -n NS).
func installNamespace(t *testing.T) string {
	t.Helper()
	guide, err := os.ReadFile(deploymentGuide)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^helm upgrade --install \S+ \S+ -n (\S+)`).FindStringSubmatch(string(guide))
	if m == nil {
		t.Fatalf("%s has no helm upgrade --install ... -n NAMESPACE", deploymentGuide)
	}
	return m[1]
}

// kubectlCommands returns each kubectl command of doc, in code blocks and
// code spans, up to the next pipe or the span's end; a command continued
// with a backslash is joined.
func kubectlCommands(doc string) []string {
	doc = strings.ReplaceAll(doc, "\\\n", " ")
	var out []string
	for _, line := range strings.Split(doc, "\n") {
		for _, part := range strings.Split(line, "`") {
			for _, piece := range strings.Split(part, "|") {
				i := strings.Index(piece, "kubectl ")
				if i < 0 {
					continue
				}
				c := strings.TrimSpace(piece[i:])
				if !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}
