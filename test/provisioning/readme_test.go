package provisioning_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/provisioning"
)

// docs/read-path.md documents the statements KEB runs; they must be the
// statements a pick runs.
func TestReadPathDocShowsTheStatementNextBindingRuns(t *testing.T) {
	readme, err := os.ReadFile("../../docs/read-path.md")
	if err != nil {
		t.Fatal(err)
	}
	dedicated, shared, err := provisioning.NextBindingSQL(provisioning.DefaultSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{dedicated, shared} {
		block := "```sql\n" + strings.TrimSpace(want) + "\n```"
		if !strings.Contains(string(readme), block) {
			t.Errorf("docs/read-path.md does not show the current statement; it should contain:\n%s", block)
		}
	}
}
