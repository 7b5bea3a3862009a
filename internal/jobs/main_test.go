package jobs_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// bed is the package's test bed; every test works in a World of its own.
var bed *testbed.Bed

func TestMain(m *testing.M) { os.Exit(testbed.RunWithBed(m, &bed)) }

func testContext(t *testing.T) context.Context {
	testbed.Require(t)
	return testbed.Context(t, 3*time.Minute)
}
