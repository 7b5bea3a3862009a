package differential

import (
	"context"
	"fmt"
	"testing"

	"github.com/lib/pq"
)

// A pick the client's Timeout cut off is KEB's live-path hand-off, not a
// failure of the bed (seed 931390, beside two CPU-bound processes); any
// other database error still is one.
func TestAPickCutOffByTheClientsTimeoutIsAHandOff(t *testing.T) {
	cancelled := fmt.Errorf("next binding for instance %q: %w", "inst-134", &pq.Error{Code: "57014"})
	for _, err := range []error{cancelled, fmt.Errorf("next binding: %w", context.DeadlineExceeded)} {
		if unexpected(err) || handOff(err) != handOffTimedOut {
			t.Errorf("%v: unexpected %t, hand-off %q; want the timeout's hand-off", err, unexpected(err), handOff(err))
		}
	}
	if broken := fmt.Errorf("next binding: %w", &pq.Error{Code: "42703"}); !unexpected(broken) {
		t.Errorf("%v: not unexpected", broken)
	}
	if _, declared := declaredDifferences[handOffTimedOut]; !declared {
		t.Error("the timeout's hand-off is not declared")
	}
}
