package differential

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/test/kebrules"
)

// The burst of seed 436117: three places free at the start, eight
// workers, two of them handed to KEB's live path, which placed on the
// GA's bindings. The table's six then had one place and needed two
// accounts, as they claimed; counting the start's room alone said one.
func TestAccountsNeededLeavesTheRoomKEBsLivePathTook(t *testing.T) {
	v := kebrules.Verdict{Seen: kebrules.Seen{Held: []string{"aws-0008", "aws-0011", "aws-0015"},
		Counts: map[string]int{"aws-0008": 2, "aws-0011": 3, "aws-0015": 1}, Limit: 3}}
	for _, c := range []struct{ n, taken, want int }{
		{6, 0, 1},
		{6, 2, 2},
		{3, 0, 0},
		{3, 3, 1},
		{6, 5, 2}, // the live path over-filled: no room is less than none
	} {
		if got := accountsNeeded(v, c.n, c.taken, v.Counts); got != c.want {
			t.Errorf("%d placements, %d places taken: %d accounts needed, want %d", c.n, c.taken, got, c.want)
		}
	}
}
