package reliability

import (
	"flag"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	trials      = flag.Int("reliability.trials", 3, "race trials under faults (make reliability runs 1000)")
	crashTrials = flag.Int("reliability.crashes", 6, "SIGKILL trials (make reliability runs 50)")
	seedFlag    = flag.Uint64("reliability.seed", 0, "first seed of the randomized trials; 0 derives one from the clock and prints it")
)

// bed is this package's own test bed: fault tests stop its API server and
// restart its PostgreSQL, which no other package's tests must see.
var bed *testbed.Bed

// binary is hap-reconciler built from this tree, for the tests that run or
// kill it as a separate process.
var binary string

func TestMain(m *testing.M) {
	testbed.Main(m, testbed.Setup{Bed: &bed, Binary: &binary})
}

// firstSeed is the seed of the first randomized trial, printed so a failing
// trial can be replayed with -reliability.seed.
func firstSeed(t *testing.T) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()%1_000_000) + 1
	}
	t.Logf("first seed %d (replay one trial with -reliability.seed=N -reliability.trials=1)", seed)
	return seed
}
