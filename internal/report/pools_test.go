package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// A pool only entries with an input "*" lead to is marked in the table, so
// nobody orders accounts for a pool no runtime draws from.
func TestPoolsTableMarksUnreachablePools(t *testing.T) {
	var out bytes.Buffer
	rows := []jobs.PoolRow{
		{HyperscalerType: "azure", Rules: []string{"azure"}},
		{HyperscalerType: "openstack", Shared: true, Rules: []string{"sap-converged-cloud(HR=*) -> S"}, Unreachable: true},
	}
	if err := WritePoolsTable(&out, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || strings.Contains(lines[1], "UNREACHABLE") || !strings.Contains(lines[2], "UNREACHABLE") ||
		!strings.Contains(lines[2], "sap-converged-cloud(HR=*) -> S") {
		t.Fatalf("only the openstack pool is marked unreachable, with its rule:\n%s", out.String())
	}
}
