package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func decodeYAML(t *testing.T, text string, v any) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, text)
	}
}

// sameData asserts that the YAML and the JSON a command printed hold the
// same data.
func sameData(t *testing.T, what, asYAML, asJSON string) {
	t.Helper()
	var fromYAML, fromJSON any
	decodeYAML(t, asYAML, &fromYAML)
	if err := json.Unmarshal([]byte(asJSON), &fromJSON); err != nil {
		t.Fatalf("%s -o json: %v\n%s", what, err, asJSON)
	}
	if !reflect.DeepEqual(withoutTimes(fromYAML), withoutTimes(fromJSON)) {
		t.Errorf("%s: -o yaml and -o json differ:\n%s\n%s", what, asYAML, asJSON)
	}
}

// withoutTimes replaces every time in v by one placeholder: two runs of a
// command stamp different moments (report --shadow's since is now less
// the window).
func withoutTimes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = withoutTimes(e)
		}
	case []any:
		for i, e := range v {
			v[i] = withoutTimes(e)
		}
	case string:
		if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return "TIME"
		}
	}
	return v
}

// Every command that prints rows prints them as kubectl does: -o table,
// wide (more columns), json and yaml (the same data), and --no-headers
// rows only.
func TestEveryRowCommandPrintsEveryFormat(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	flags := s.Flags()
	mustRun := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runBinary(t, nil, append(args, flags...)...)
		if code != 0 {
			t.Fatalf("hap-reconciler %v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		return stdout
	}
	mustRun("migrate")
	commands := []struct {
		args []string
		// header starts the header line of the (first) table; wide is a
		// column -o wide adds.
		header, wide string
	}{
		{[]string{"report", "--live"}, "GLOBAL ACCOUNT", "EFFECTIVE"},
		{[]string{"pools", "--live"}, "POOL", "FREE PER DAY"},
		{[]string{"report", "--shadow"}, "", ""},
	}
	for _, c := range commands {
		what := strings.Join(c.args, " ")
		sameData(t, what, mustRun(append(c.args, "-o", "yaml")...), mustRun(append(c.args, "-o", "json")...))
		if c.header == "" {
			continue // no pick compared yet: the summary line only
		}
		table, wide := mustRun(c.args...), mustRun(append(c.args, "-o", "wide")...)
		if !strings.Contains(table, c.header) || strings.Contains(table, c.wide) || !strings.Contains(wide, c.wide) {
			t.Errorf("%s: -o wide adds no %s column:\n%s\n%s", what, c.wide, table, wide)
		}
		for _, format := range []string{"table", "wide"} {
			rows := mustRun(append(c.args, "-o", format, "--no-headers")...)
			if strings.TrimSpace(rows) == "" || strings.Contains(rows, c.header) || strings.Contains(rows, "Candidate table") {
				t.Errorf("%s -o %s --no-headers prints more than rows (or none):\n%s", what, format, rows)
			}
		}
	}
}

// check -o json prints the outcome on stdout, the failures in the order to
// fix them, and logs to stderr, so the output is JSON whole; it exits 1 on
// a failure as without -o.
func TestCheckPrintsItsOutcomeAsJSON(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	if code, stdout, stderr := runBinary(t, nil, append([]string{"migrate"}, s.Flags()...)...); code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := runBinary(t, nil, append([]string{"check", "-o", "json"}, s.Flags()...)...)
	var outcome struct {
		Passed    bool     `json:"passed"`
		Namespace string   `json:"namespace"`
		Bindings  int      `json:"bindings"`
		Failures  []string `json:"failures"`
	}
	if err := json.Unmarshal([]byte(stdout), &outcome); err != nil {
		t.Fatalf("check -o json printed no JSON on stdout: %v\n%s", err, stdout)
	}
	if code != exitFailed || outcome.Passed || outcome.Namespace != s.World.Namespace || outcome.Bindings == 0 || len(outcome.Failures) != 1 ||
		!strings.Contains(outcome.Failures[0], "does not come from KEB's APP_HAP_MULTI_HYPERSCALER_ACCOUNT_* variables") {
		t.Errorf("check -o json on a policy from the file: exit %d, %+v", code, outcome)
	}
	if !isJSONLine(withoutStartupLines(stderr)) {
		t.Errorf("check -o json logs its error line elsewhere than stderr:\n%s", stderr)
	}
}
