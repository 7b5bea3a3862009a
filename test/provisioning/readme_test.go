package provisioning_test

import (
	"context"
	"database/sql"
	"errors"
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
	dedicated, shared := pickStatements(t)
	for _, want := range []string{dedicated, shared} {
		block := "```sql\n" + strings.TrimSpace(want) + "\n```"
		if !strings.Contains(string(readme), block) {
			t.Errorf("docs/read-path.md does not show the current statement; it should contain:\n%s", block)
		}
	}
}

// pickStatements are the texts the two picks send, as a client sends them.
func pickStatements(t *testing.T) (dedicated, shared string) {
	t.Helper()
	var sent recorder
	client := &provisioning.Client{DB: &sent}
	for _, ga := range []string{"ga", ""} {
		if _, err := client.Propose(context.Background(), provisioning.Request{InstanceID: "i", GlobalAccountID: ga, HyperscalerType: "aws"}); !errors.Is(err, errRecorded) {
			t.Fatalf("a pick through the recorder: %v", err)
		}
	}
	if len(sent) != 2 {
		t.Fatalf("the picks sent %d statements, want one each", len(sent))
	}
	return sent[0], sent[1]
}

var errRecorded = errors.New("recorded, not run")

// recorder is a database that keeps the text of every statement it is
// sent and runs none.
type recorder []string

func (r *recorder) QueryContext(_ context.Context, query string, _ ...any) (*sql.Rows, error) {
	*r = append(*r, query)
	return nil, errRecorded
}
