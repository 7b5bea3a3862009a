package manifests_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ruleKinds are the kinds the alerts can be rendered as, one at a time.
var ruleKinds = []string{"VMRule", "PrometheusRule", "ConfigMap"}

// The alerts are one object, whatever the cluster serves: a VMRule by
// default (KEB's landscape runs VictoriaMetrics), a PrometheusRule on
// request, both refused; where the chosen kind is not served (helm template
// without --api-versions, a cluster without the CRD) the same rule file
// comes as a ConfigMap, so no alert vanishes silently.
func TestTheAlertsAreOneObjectThatNeverVanishes(t *testing.T) {
	helm := helmBin(t)
	prometheusRule := []string{"--set", "hapReconciler.vmRule.enabled=false", "--set", "hapReconciler.prometheusRule.enabled=true"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"default, both APIs served", monitoringAPIs, "VMRule/hap-reconciler"},
		{"PrometheusRule asked for, both APIs served", append(slices.Clone(monitoringAPIs), prometheusRule...), "PrometheusRule/hap-reconciler"},
		{"default, no --api-versions", nil, "ConfigMap/hap-reconciler-alerts"},
		{"PrometheusRule asked for, no --api-versions", prometheusRule, "ConfigMap/hap-reconciler-alerts"},
	} {
		_, objs := render(t, helm, "kcp-system", append(slices.Clone(project), c.args...)...)
		var rules []string
		for _, o := range objs {
			if slices.Contains(ruleKinds, o.GetKind()) && (o.GetKind() != "ConfigMap" || o.GetName() == "hap-reconciler-alerts") {
				rules = append(rules, o.GetKind()+"/"+o.GetName())
			}
		}
		if !slices.Equal(rules, []string{c.want}) {
			t.Errorf("%s: the alerts rendered as %v, want %s alone", c.name, rules, c.want)
		}
		if c.want == "ConfigMap/hap-reconciler-alerts" {
			file, err := os.ReadFile(prometheusRuleFile)
			if err != nil {
				t.Fatal(err)
			}
			got, _, _ := unstructured.NestedString(find(t, objs, "ConfigMap", "hap-reconciler-alerts").Object, "data", "alerts.yaml")
			// The file as it is, its runbook links at the release's tag.
			want := strings.ReplaceAll(strings.TrimRight(string(file), "\n"), runbookOnMain, runbookAtRelease(t))
			if got != want || strings.Contains(got, runbookOnMain) {
				t.Errorf("%s: the ConfigMap's alerts.yaml is not files/alerts.yaml as it is, with the runbook at the release's tag", c.name)
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"template", releaseName, chartDir, "--namespace", "kcp-system", "--kube-version", kubeVersion,
		"--set", "hapReconciler.prometheusRule.enabled=true"}, append(slices.Clone(project), monitoringAPIs...)...)
	out, err := exec.CommandContext(ctx, helm, args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "enable one") {
		t.Errorf("both rule kinds enabled: helm template %v, want it refused saying to enable one\n%s", err, out)
	}
}
