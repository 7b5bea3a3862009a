package jobs_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/testbed"
)

// bed is the package's test bed; every test works in a World of its own.
var bed *testbed.Bed

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	var err error
	bed, err = testbed.StartBed(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test bed:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := bed.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test bed:", err)
	}
	os.Exit(code)
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
