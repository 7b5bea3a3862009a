package manifests_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const dashboardFile = "../../manifests/hap-reconciler/files/dashboard.json"

type dashboardPanel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// TestDashboardQueriesParse has promtool parse every query of the dashboard,
// wrapped as recording rules, so a typo in PromQL fails here and not on a
// blank panel. Grafana's variables are replaced by what they expand to.
func TestDashboardQueriesParse(t *testing.T) {
	promtool := ensureTool(t, "promtool", "install-promtool.sh")
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string           `json:"uid"`
		Panels []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardFile, err)
	}
	if dash.UID == "" {
		t.Errorf("%s: no uid; the Grafana sidecar needs a stable one", dashboardFile)
	}

	var rules []map[string]string
	ids := map[int]string{}
	for _, p := range dash.Panels {
		if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource must be the ${datasource} variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for i, target := range p.Targets {
			expr := strings.ReplaceAll(target.Expr, "$instance", ".+")
			rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:panel_%d_%d", p.ID, i), "expr": expr})
		}
	}
	file := map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}}
	out, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, promtool, "check", "rules", path)

	// The chart ships the file unchanged in the sidecar's ConfigMap.
	_, objs := render(t, helmBin(t), "kcp-system")
	cm := find(t, objs, "ConfigMap", releaseName+"-dashboard")
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "hap-reconciler.json"); strings.TrimSpace(got) != strings.TrimSpace(string(data)) {
		t.Errorf("the rendered dashboard ConfigMap differs from %s", dashboardFile)
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap labels %v: want grafana_dashboard: \"1\" for the Grafana sidecar", cm.GetLabels())
	}
}
