// Package parity holds the test suite that checks the job against KEB's own
// rules on the real test bed: random landscapes full of the label values and
// instance rows KEB meets in practice, in a PostgreSQL cluster whose
// collation is not byte order, and an independent statement of KEB's choice
// that reads Gardener through KEB's label selectors and KEB's table through
// KEB's count.
package parity

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

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
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testbed.Short() {
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	pg, err := testbed.StartPostgresWithLocale(ctx, testbed.CollatingLocale)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting PostgreSQL in %s (hack/ensure-tools.sh generates the locale): %v\n", testbed.CollatingLocale, err)
		return 1
	}
	kube, err := testbed.StartKube(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the API server:", errors.Join(err, pg.Stop()))
		return 1
	}
	bed = &testbed.Bed{Kube: kube, Postgres: pg}
	defer func() {
		if err := bed.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test bed:", err)
		}
	}()
	return m.Run()
}
