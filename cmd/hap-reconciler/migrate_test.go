package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/app"
)

// migrate says what it applied and reverted; run --dry-run and serve
// --dry-run on a schema behind the release stop with exit 1 and changes no table, neither the
// schema nor its version; after migrate it runs.
func TestMigrateSaysWhatItAppliedAndADryRunNeverMigrates(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	logs := s.mustRun(t, "migrate")
	if strings.Contains(logs, app.PolicyMessage) {
		t.Errorf("migrate logs the multi-account policy, which it does not apply:\n%s", logs)
	}
	applied := loggedMigrations(t, logs, app.MigrationsMessage)
	n := len(applied)
	if n < 2 || applied[0] != "1_job_tables" || applied[n-1] != fmt.Sprintf("%d_%s", n, strings.SplitN(applied[n-1], "_", 2)[1]) {
		t.Fatalf("the first migrate should apply every migration from 1_job_tables on, numbered without gaps: %v\n%s", applied, logs)
	}
	if logs := s.mustRun(t, "migrate"); strings.Contains(logs, "applied migrations") || !strings.Contains(logs, fmt.Sprintf(`"version":%d`, n)) {
		t.Fatalf("the second migrate should apply nothing and say the version:\n%s", logs)
	}
	logs = s.mustRun(t, "migrate", "--down", "2")
	if reverted := loggedMigrations(t, logs, "reverted migrations"); !slices.Equal(reverted, []string{applied[n-1], applied[n-2]}) ||
		!strings.Contains(logs, fmt.Sprintf(`"version":%d`, n-2)) {
		t.Fatalf("migrate --down 2 should revert %s and %s and leave version %d:\n%s", applied[n-1], applied[n-2], n-2, logs)
	}
	before := s.schemaText(t)

	code, _, logs := s.cli(t, "run", "--dry-run")
	line := oneLine(t, code, logs)
	for _, want := range []string{"a dry run applies no migration: run `hap-reconciler migrate` first", fmt.Sprintf(`schema "hap" needs version %d and it is at version %d`, n, n-2)} {
		if !strings.Contains(line, want) {
			t.Errorf("%q does not say %q", line, want)
		}
	}
	if after := s.schemaText(t); after != before {
		t.Fatalf("run --dry-run changed the schema:\n%s\nbefore:\n%s", after, before)
	}
	code, _, logs = s.cli(t, "serve", "--dry-run", "--listen", "127.0.0.1:0")
	if line := oneLine(t, code, logs); !strings.Contains(line, "a dry run applies no migration") {
		t.Errorf("serve --dry-run on a schema behind: %q", line)
	}
	if after := s.schemaText(t); after != before {
		t.Fatalf("serve --dry-run changed the schema:\n%s\nbefore:\n%s", after, before)
	}

	if again := loggedMigrations(t, s.mustRun(t, "migrate"), app.MigrationsMessage); !slices.Equal(again, applied[n-2:]) {
		t.Fatalf("migrate after --down 2 applied %v, want %v again", again, applied[n-2:])
	}
	s.mustRun(t, "run", "--dry-run")
}

// schemaText is the job's schema as text: its version and every column of
// its tables, with the number of rows of each table.
func (s *scene) schemaText(t *testing.T) string {
	t.Helper()
	var text string
	err := s.db(t).QueryRow(testContext(t), `
SELECT (SELECT format('version %s dirty %s', version, dirty) FROM hap.hap_reconciler_migrations) || E'\n' ||
  coalesce(string_agg(format('%s.%s %s', table_name, column_name, data_type), E'\n' ORDER BY table_name, column_name), '')
FROM information_schema.columns WHERE table_schema = 'hap'`).Scan(&text)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"binding_drift", "binding_candidates", "pool_history", "binding_releases", "shadow_picks"} {
		var n int64
		if err := s.db(t).QueryRow(testContext(t), "SELECT count(*) FROM hap."+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		text += fmt.Sprintf("\n%s: %d rows", table, n)
	}
	return text
}

// loggedMigrations reads the migrations named by the log line msg.
func loggedMigrations(t *testing.T, logs, msg string) []string {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		var entry struct {
			Msg        string   `json:"msg"`
			Migrations []string `json:"migrations"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == msg {
			return entry.Migrations
		}
	}
	t.Fatalf("no %q line in\n%s", msg, logs)
	return nil
}
