package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// The job never migrates past what KEB's pinned module reads: migrate with
// kebModule.* naming an older module stops with exit 2, naming the key,
// and changes nothing. check says whether KEB's pin reads the schema.
func TestMigrateAndCheckHoldTheSchemaToKEBsPinnedModule(t *testing.T) {
	older := fmt.Sprintf("kebModule:\n  schemaOldest: %d\n  schemaNewest: %d\n", schema.Oldest-2, schema.Oldest-1)
	s := load(t, tinyLandscape(), plantedConfig+older)
	code, _, logs := s.cli(t, "migrate")
	if code != exitUsage || !strings.Contains(logs, "kebModule.schemaNewest") || !strings.Contains(logs, "raise KEB's pin of the module first") {
		t.Errorf("migrate past KEB's pinned module: exit %d, want %d naming kebModule.schemaNewest:\n%s", code, exitUsage, logs)
	}
	var tables int
	if err := s.db(t).QueryRow(testContext(t), `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'hap'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("the refused migrate left %d tables (%v), want none", tables, err)
	}

	s = load(t, tinyLandscape(), plantedConfig)
	s.mustRun(t, "migrate")
	if _, _, logs := s.cli(t, "check"); strings.Contains(logs, "does not read the job's schema") {
		t.Errorf("check with this release's module in kebModule.*:\n%s", logs)
	}
	if err := os.WriteFile(s.ConfigPath, []byte(plantedConfig+older), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, logs = s.cli(t, "check")
	if code != exitFailed || !strings.Contains(logs, "KEB's pinned provisioning module (kebModule.*) does not read the job's schema") ||
		!strings.Contains(logs, provisioning.ErrSchemaSkew.Error()) {
		t.Errorf("check with an older pin: exit %d, want %d saying so:\n%s", code, exitFailed, logs)
	}
}
