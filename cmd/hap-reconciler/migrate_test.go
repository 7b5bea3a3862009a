package main

import (
	"fmt"
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
	if !strings.Contains(logs, `"msg":"applied migrations"`) || !strings.Contains(logs, `"1_job_tables"`) || !strings.Contains(logs, `"10_claim_leases"`) {
		t.Fatalf("the first migrate does not log the migrations it applied:\n%s", logs)
	}
	if logs := s.mustRun(t, "migrate"); strings.Contains(logs, "applied migrations") || !strings.Contains(logs, `"version":10`) {
		t.Fatalf("the second migrate should apply nothing and say the version:\n%s", logs)
	}
	logs = s.mustRun(t, "migrate", "--down", "2")
	if !strings.Contains(logs, `"msg":"reverted migrations"`) || !strings.Contains(logs, `["10_claim_leases","9_pick_confirmed"]`) ||
		!strings.Contains(logs, `"version":8`) {
		t.Fatalf("migrate --down 2 does not log what it reverted and the version left:\n%s", logs)
	}
	before := s.schemaText(t)

	code, _, logs := s.cli(t, "run", "--dry-run")
	line := oneLine(t, code, logs)
	for _, want := range []string{"a dry run applies no migration: run `hap-reconciler migrate` first", `schema "hap" needs version 10 and it is at version 8`} {
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

	if logs := s.mustRun(t, "migrate"); !strings.Contains(logs, `["9_pick_confirmed","10_claim_leases"]`) {
		t.Fatalf("migrate after --down 2 should apply 9 and 10 again:\n%s", logs)
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
