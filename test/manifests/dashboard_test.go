package manifests_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const dashboardFile = "../../manifests/hap-reconciler/files/dashboard.json"

type dashboardPanel struct {
	ID    int    `json:"id"`
	Type  string `json:"type"`
	Title string `json:"title"`
	// Datasource is a name or a variable in schema 27; the {type, uid}
	// object of later schemas does not load in Plutono.
	Datasource any `json:"datasource"`
	Targets    []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	XAxis *struct {
		Mode string `json:"mode"`
	} `json:"xaxis"`
	YAxes []map[string]any `json:"yaxes"`
}

// plutonoSchemaVersion is the dashboard schema KEB's own dashboards are
// written in (schemaVersion of utils/local-monitoring/dashboards/keb-dashboard.json
// in kyma-project/kyma-environment-broker): Plutono, the Grafana 7.5 fork
// KEB's landscape shows dashboards in, reads that schema.
const plutonoSchemaVersion = 27

// plutonoPanels are the panel types of that schema that Plutono ships as
// stable core panels (KEB's dashboards use row, graph, stat and bargauge).
// timeseries, Grafana 8's default, is not among them.
var plutonoPanels = []string{"row", "graph", "stat", "bargauge", "gauge", "table", "text", "heatmap"}

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
		UID           string           `json:"uid"`
		SchemaVersion int              `json:"schemaVersion"`
		Panels        []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardFile, err)
	}
	if dash.UID == "" {
		t.Errorf("%s: no uid; the Grafana sidecar needs a stable one", dashboardFile)
	}
	if dash.SchemaVersion != plutonoSchemaVersion {
		t.Errorf("%s: schemaVersion %d, want %d (Plutono's, as KEB's dashboards)", dashboardFile, dash.SchemaVersion, plutonoSchemaVersion)
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
		if !slices.Contains(plutonoPanels, p.Type) {
			t.Errorf("panel %q: type %q is not a panel Plutono ships (%v)", p.Title, p.Type, plutonoPanels)
		}
		if p.Datasource != "$datasource" {
			t.Errorf("panel %q: datasource %v, want the $datasource variable as a string (schema %d)", p.Title, p.Datasource, plutonoSchemaVersion)
		}
		if p.Type == "graph" && (p.XAxis == nil || p.XAxis.Mode != "time" || len(p.YAxes) != 2) {
			t.Errorf("panel %q: a graph panel of schema %d needs xaxis.mode time and two yaxes", p.Title, plutonoSchemaVersion)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			if target.RefID == "" {
				t.Errorf("panel %q: a query without refId", p.Title)
			}
		}
		for i, target := range p.Targets {
			expr := strings.ReplaceAll(target.Expr, "$instance", ".+")
			rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:panel_%d_%d", p.ID, i), "expr": expr})
		}
	}
	// The job's series beside KEB's own: a panel that queries both.
	beside := 0
	for _, p := range dash.Panels {
		var job, keb bool
		for _, target := range p.Targets {
			job = job || strings.Contains(target.Expr, "keb_available_credentials_bindings") || strings.Contains(target.Expr, "keb_credentials_bindings_per_ga")
			keb = keb || strings.Contains(target.Expr, "kcp_keb_v2_")
		}
		if job && keb {
			beside++
		}
	}
	if beside == 0 {
		t.Errorf("no panel shows the job's keb_* series beside KEB's kcp_keb_v2_* ones")
	}
	// No later schema's object-form datasource anywhere (templating
	// included): Plutono would not resolve it.
	var raw any
	_ = json.Unmarshal(data, &raw)
	walkJSON(raw, func(key string, v any) {
		if _, isObject := v.(map[string]any); key == "datasource" && isObject {
			t.Errorf("a datasource given as an object (%v): schema %d names data sources by string", v, plutonoSchemaVersion)
		}
	})

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
	_, objs := render(t, helmBin(t), "kcp-system", project...)
	cm := find(t, objs, "ConfigMap", releaseName+"-dashboard")
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "hap-reconciler.json"); strings.TrimSpace(got) != strings.TrimSpace(string(data)) {
		t.Errorf("the rendered dashboard ConfigMap differs from %s", dashboardFile)
	}
	if cm.GetLabels()["plutono-dashboard"] != "true" {
		t.Errorf("dashboard ConfigMap labels %v: want plutono-dashboard: \"true\", the label KEB's Plutono reads", cm.GetLabels())
	}
}

// walkJSON calls fn for every member of every object in v.
func walkJSON(v any, fn func(key string, v any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			fn(k, x)
			walkJSON(x, fn)
		}
	case []any:
		for _, x := range v {
			walkJSON(x, fn)
		}
	}
}
