package provisioning_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/provisioning"
)

// docs/read-path.md documents the statement KEB runs; it must be the
// statement NextBinding runs.
func TestReadPathDocShowsTheStatementNextBindingRuns(t *testing.T) {
	readme, err := os.ReadFile("../../docs/read-path.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := provisioning.NextBindingSQL(provisioning.DefaultSchema)
	if err != nil {
		t.Fatal(err)
	}
	block := "```sql\n" + strings.TrimSpace(want) + "\n```"
	if !strings.Contains(string(readme), block) {
		t.Fatalf("docs/read-path.md does not show the current statement; it should contain:\n%s", block)
	}
}
