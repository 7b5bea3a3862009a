// Package parity holds the test suite that checks the job against KEB's own
// rules on the real test bed: random landscapes full of the label values and
// instance rows KEB meets in practice, in a PostgreSQL cluster whose
// collation is not byte order, and an independent statement of KEB's choice
// that reads Gardener through KEB's label selectors and KEB's table through
// KEB's count.
package parity

import (
	"flag"
	"testing"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	seeds    = flag.Int("parity.seeds", 8, "random landscapes to check")
	seedFrom = flag.Uint64("parity.seed", 1, "first seed")
)

// bed serves Gardener's kinds and a PostgreSQL created in a collating
// locale, where "aws1a" sorts before "aws-1b".
var bed *testbed.Bed

func TestMain(m *testing.M) {
	testbed.Main(m, testbed.Setup{Bed: &bed, Locale: testbed.CollatingLocale})
}
