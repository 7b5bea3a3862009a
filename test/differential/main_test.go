// Package differential checks the read path at the moment KEB asks, not at
// the job's snapshot: a seeded stream of KEB's actions (picks from the
// candidate table, placements on KEB's live path, deprovisionings with
// KEB's free step, cleanups returning accounts to the pool, two replicas
// claiming at once, shared-pool picks) runs against the real
// gardener-apiserver and PostgreSQL while the candidates job runs at random
// moments, first as a CronJob (in-process or as the built binary), then as
// serve. After every pick the table's answer is compared with KEB's rules
// evaluated on the live state at that moment, stated independently of the
// job's code in test/kebrules.
//
// TestSoak streams the same actions at the built binary's serve for a
// while of compressed time, restarting the servers now and then, and
// samples the process and every table of the job's schema (make soak; a
// short one in make test).
package differential

import (
	"flag"
	"testing"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	picksFlag = flag.Int("differential.picks", 300, "table picks in the stream (make differential PICKS=10000)")
	seedFlag  = flag.Uint64("differential.seed", 0, "seed of the stream; 0 derives one from the clock and prints it")
)

// bed is the package's own test bed: the stream's world needs nobody
// else's tests beside it.
var bed *testbed.Bed

// binary is hap-reconciler built from this tree, for the job runs made as
// a CronJob makes them: one process per run.
var binary string

func TestMain(m *testing.M) {
	testbed.Main(m, testbed.Setup{Bed: &bed, Binary: &binary})
}
