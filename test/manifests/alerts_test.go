package manifests_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	// prometheusRuleFile holds the rule groups the chart's PrometheusRule
	// carries; the tests read them from what helm template renders.
	prometheusRuleFile = "../../manifests/hap-reconciler/files/alerts.yaml"
	alertTestsDir      = "../../manifests/alerts-test"
	runbookFile        = "../../docs/runbook.md"
	chartFile          = "../../manifests/hap-reconciler/Chart.yaml"
	// runbookOnMain is how files/alerts.yaml and the promtool cases link
	// the runbook; the chart renders the links at its appVersion's tag.
	runbookOnMain = "https://github.com/kyma-project/hap-reconciler/blob/main/docs/runbook.md#"
	// extractedRulesFile is the name the promtool tests in alerts-test/ load.
	extractedRulesFile = "hap-reconciler-rules.yaml"
)

type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

type promtoolTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name          string `json:"name"`
		AlertRuleTest []struct {
			AlertName string `json:"alertname"`
			// Only how many alerts a case expects matters here.
			ExpAlerts []map[string]any `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestAlertRules runs promtool on the spec of the PrometheusRule and of the
// VMRule the chart renders: the plain rule file promtool needs is extracted
// from each, and each passes the same cases (vmalert evaluates the same
// PromQL; the cases hold the rules to what they must do, whichever engine
// runs them).
func TestAlertRules(t *testing.T) {
	for _, kind := range []string{"PrometheusRule", "VMRule"} {
		t.Run(kind, func(t *testing.T) { promtoolRuleTests(t, ruleSpec(t, kind)) })
	}
}

func promtoolRuleTests(t *testing.T, spec []byte) {
	promtool := ensureTool(t, "promtool", "install-promtool.sh")
	dir := t.TempDir()
	rules := filepath.Join(dir, extractedRulesFile)
	if err := os.WriteFile(rules, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, promtool, "check", "rules", rules)

	tests := alertTestFiles(t)
	args := []string{"test", "rules"}
	for _, src := range tests {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		// The cases expect the annotations as files/alerts.yaml writes them;
		// the rendered rules link the runbook at the release's tag.
		data = []byte(strings.ReplaceAll(string(data), runbookOnMain, runbookAtRelease(t)))
		dst := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, dst)
	}
	run(t, promtool, args...)
}

// TestEveryAlertIsDocumentedAndTested holds each alert to the house rules:
// summary, description, a severity, a runbook_url pointing at an existing
// section of docs/runbook.md, and promtool cases where it fires and where it
// does not. The VMRule carries exactly the PrometheusRule's groups, so the
// rules hold for both.
func TestEveryAlertIsDocumentedAndTested(t *testing.T) {
	spec := ruleSpec(t, "PrometheusRule")
	if vm := ruleSpec(t, "VMRule"); string(vm) != string(spec) {
		t.Errorf("the VMRule's groups differ from the PrometheusRule's:\n%s\n---\n%s", vm, spec)
	}
	var groups ruleGroups
	if err := yaml.Unmarshal(spec, &groups); err != nil {
		t.Fatalf("parse rule groups: %v", err)
	}
	runbook, err := os.ReadFile(runbookFile)
	if err != nil {
		t.Fatal(err)
	}
	anchors := markdownAnchors(string(runbook))
	firing, silent := promtoolCases(t)
	runbookURLPrefix := runbookAtRelease(t)

	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts = append(alerts, r.Alert)
			for _, key := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[key]) == "" {
					t.Errorf("alert %s: annotation %s is missing", r.Alert, key)
				}
			}
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
				t.Errorf("alert %s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
			}
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], runbookURLPrefix)
			if !ok || anchor != strings.ToLower(r.Alert) || !anchors[anchor] {
				t.Errorf("alert %s: runbook_url %q, want %s%s with a section \"## %s\" in %s",
					r.Alert, r.Annotations["runbook_url"], runbookURLPrefix, strings.ToLower(r.Alert), r.Alert, runbookFile)
			}
			if firing[r.Alert] == 0 {
				t.Errorf("alert %s: no promtool case in %s/ expects it to fire", r.Alert, alertTestsDir)
			}
			if silent[r.Alert] == 0 {
				t.Errorf("alert %s: no promtool case in %s/ expects it not to fire", r.Alert, alertTestsDir)
			}
		}
	}
	if len(alerts) == 0 {
		t.Fatalf("no alerts found in %s", prometheusRuleFile)
	}
	for name := range firing {
		if !slices.Contains(alerts, name) {
			t.Errorf("promtool cases test alert %s, which %s does not define", name, prometheusRuleFile)
		}
	}
}

// ruleSpec returns the .spec of the PrometheusRule or VMRule helm template
// renders, as YAML: a plain Prometheus rule file.
func ruleSpec(t *testing.T, kind string) []byte {
	t.Helper()
	args := append(slices.Clone(project), monitoringAPIs...)
	if kind == "PrometheusRule" {
		args = append(args, "--set", "hapReconciler.vmRule.enabled=false", "--set", "hapReconciler.prometheusRule.enabled=true")
	}
	_, objs := render(t, helmBin(t), "kcp-system", args...)
	rule := find(t, objs, kind, releaseName)
	spec, ok := rule.Object["spec"].(map[string]any)
	if !ok || spec["groups"] == nil {
		t.Fatalf("the rendered %s has no spec.groups", kind)
	}
	out, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runbookAtRelease is where the rendered alerts link the runbook: the docs
// at the tag of the chart's appVersion, the release deployed, not main.
func runbookAtRelease(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(chartFile)
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil || chart.AppVersion == "" {
		t.Fatalf("%s: no appVersion (%v)", chartFile, err)
	}
	return "https://github.com/kyma-project/hap-reconciler/blob/" + chart.AppVersion + "/docs/runbook.md#"
}

func alertTestFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(alertTestsDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool tests in %s/ (err: %v)", alertTestsDir, err)
	}
	return files
}

// promtoolCases counts, per alert, the promtool evaluations that expect it
// to fire and those that expect silence.
func promtoolCases(t *testing.T) (firing, silent map[string]int) {
	t.Helper()
	firing, silent = map[string]int{}, map[string]int{}
	for _, file := range alertTestFiles(t) {
		var pt promtoolTests
		readYAML(t, file, &pt)
		if !slices.Equal(pt.RuleFiles, []string{extractedRulesFile}) {
			t.Errorf("%s: rule_files %v, want [%s] (extracted from %s)", file, pt.RuleFiles, extractedRulesFile, prometheusRuleFile)
		}
		for _, tc := range pt.Tests {
			for _, art := range tc.AlertRuleTest {
				if len(art.ExpAlerts) > 0 {
					firing[art.AlertName]++
				} else {
					silent[art.AlertName]++
				}
			}
		}
	}
	return firing, silent
}

var headingPattern = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*$`)

// markdownAnchors returns the anchors GitHub derives from the headings of a
// Markdown document: lower case, spaces to hyphens, punctuation dropped.
func markdownAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	for _, m := range headingPattern.FindAllStringSubmatch(doc, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}
