package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// bed is the package's test bed; every test works in a World of its own.
var bed *testbed.Bed

func TestMain(m *testing.M) { testbed.Main(m, testbed.Setup{Bed: &bed}) }

func testContext(t *testing.T) context.Context {
	return testbed.Context(t, 3*time.Minute)
}
