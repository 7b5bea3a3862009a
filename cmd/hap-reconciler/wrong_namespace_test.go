package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// kebVariables set the multi-account policy the way KEB's chart does, which
// check insists on.
var kebVariables = map[string]string{
	"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_ALLOWED_GLOBAL_ACCOUNTS": "*",
	"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_DEFAULT":          "3",
}

// A wrong namespace (one that lists no binding of those KEB's database
// places its clusters on) changes no table of the job's schema, with or
// without --dry-run, and the run exits 1 naming the namespace; check fails
// on it and passes on the right one. Before the guard, drift resolved every
// real finding here and opened an instance_on_missing_binding for each
// binding, and the release forgot its clocks.
func TestAWrongNamespaceChangesNoTableOfTheJobsSchema(t *testing.T) {
	l := landscape.Generate(landscape.Options{Seed: 8, GlobalAccounts: 2})
	plantedAdmissible(l)
	s := load(t, l, plantedConfig)
	s.mustRun(t, "run")
	before := s.schemaRows(t)
	if !strings.Contains(before, "hap.binding_drift") {
		t.Fatalf("the scene records no drift finding, so the test proves nothing:\n%s", before)
	}
	wrong := s.inNamespace(t, "garden-wrong")

	for _, args := range [][]string{{"run"}, {"run", "--dry-run"}, {"run", "--jobs", "drift"}} {
		code, _, logs := wrong.cli(t, args...)
		if code != exitFailed || !strings.Contains(logs, "the picture is implausible") || !strings.Contains(logs, wrong.World.Namespace) {
			t.Errorf("%v in a wrong namespace: exit %d, want %d naming %s\n%s", args, code, exitFailed, wrong.World.Namespace, logs)
		}
		if after := s.schemaRows(t); after != before {
			t.Errorf("%v in a wrong namespace changed the job's schema:\nbefore\n%s\nafter\n%s", args, before, after)
		}
	}

	code, logs := wrong.withEnv(t, kebVariables, "check")
	if code != exitFailed || !strings.Contains(logs, "is not the one KEB provisions in") || !strings.Contains(logs, wrong.World.Namespace) {
		t.Errorf("check in a wrong namespace: exit %d, want %d naming the namespace\n%s", code, exitFailed, logs)
	}
	if code, logs := s.withEnv(t, kebVariables, "check"); code != exitOK || !strings.Contains(logs, `"kebIndexForTheReadPath":true`) {
		t.Errorf("check in the right namespace, KEB's index in place: exit %d\n%s", code, logs)
	}
	// Without KEB's index the job still works; check says what KEB's read
	// path lacks.
	if _, err := s.Conn(t, testContext(t)).Exec(testContext(t), schema.KEBIndexDown); err != nil {
		t.Fatal(err)
	}
	if code, logs := s.withEnv(t, kebVariables, "check"); code != exitOK || !strings.Contains(logs, `"kebIndexForTheReadPath":false`) ||
		!strings.Contains(logs, "lacks the index the read path counts through") {
		t.Errorf("check without KEB's index: exit %d, want a pass with a warning naming the index\n%s", code, logs)
	}
	// The INVALID index a failed concurrent build leaves is missing too.
	if err := bed.Postgres.LeaveKEBIndexInvalid(testContext(t), s.World.DatabaseName); err != nil {
		t.Fatal(err)
	}
	if code, logs := s.withEnv(t, kebVariables, "check"); code != exitOK || !strings.Contains(logs, `"kebIndexForTheReadPath":false`) ||
		!strings.Contains(logs, "or holds it INVALID") {
		t.Errorf("check with KEB's index INVALID: exit %d, want a pass with a warning naming the invalid index\n%s", code, logs)
	}
}

// check names the Gardener credentials before the policy: with both wrong,
// the first failure to fix is the one that keeps the job from reading.
func TestCheckSaysToFixTheGardenerCredentialsFirst(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig) // the policy from the file: check refuses it
	code, _, logs := execCLI(t, append(append([]string{"check"}, s.Flags()...), "--kubeconfig", impersonating(t, "nobody"))...)
	line := oneLine(t, code, logs)
	gardener, policy := strings.Index(line, "listing credentials bindings"), strings.Index(line, "does not come from KEB's")
	if gardener < 0 || policy < 0 || gardener > policy || !strings.Contains(line, "fix them in this order") {
		t.Errorf("want the Gardener failure named before the policy's, got %q", line)
	}
}

// inNamespace is the scene's database with a namespace of its own, which
// lists none of the scene's bindings.
func (s *scene) inNamespace(t *testing.T, name string) *scene {
	t.Helper()
	ns, err := bed.Kube.NewNamespace(testContext(t), name)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := *s.Scene
	elsewhere.World = &testbed.World{Namespace: ns, DatabaseName: s.World.DatabaseName, DatabaseURL: s.World.DatabaseURL}
	return &scene{&elsewhere}
}

// withEnv runs hap-reconciler against the scene with env as the whole
// environment and a configuration file without a policy of its own (KEB's
// variables and the file's block together are refused), returning its exit
// code and everything it printed.
func (s *scene) withEnv(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	noPolicy := filepath.Join(t.TempDir(), "no-policy.yaml")
	writeFile(t, noPolicy, noPolicyConfig)
	var out, errOut bytes.Buffer
	args = append(append(args, s.Flags()...), "--config", noPolicy)
	code := execute(testContext(t), args, &out, &errOut, func(k string) string { return env[k] })
	return code, out.String() + errOut.String()
}

// schemaRows is every row of every table of the job's schema, as text.
func (s *scene) schemaRows(t *testing.T) string {
	t.Helper()
	rows, err := s.db(t).Query(testContext(t),
		`SELECT table_name FROM information_schema.tables WHERE table_schema = 'hap' AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, table := range tables {
		var content string
		err := s.db(t).QueryRow(testContext(t),
			`SELECT coalesce(string_agg(r::text, E'\n' ORDER BY r::text), '') FROM hap.`+table+` r`).Scan(&content)
		if err != nil {
			t.Fatal(err)
		}
		if content != "" {
			text.WriteString("hap." + table + "\n" + content + "\n")
		}
	}
	return text.String()
}
