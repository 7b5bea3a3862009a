package testbed

import (
	"context"
	"testing"
	"time"
)

// KubeForTest starts a Kube for one test and stops it when the test ends.
// The generous timeout covers building kube-apiserver on a fresh machine.
func KubeForTest(tb testing.TB, opts ...KubeOption) *Kube {
	tb.Helper()
	Require(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	k, err := StartKube(ctx, opts...)
	if err != nil {
		tb.Fatalf("start kube test bed: %v", err)
	}
	tb.Cleanup(func() {
		if err := k.Stop(); err != nil {
			tb.Errorf("stop kube test bed: %v", err)
		}
	})
	return k
}

// Context is the context of a test that needs the test bed: done after
// timeout, so a hung server fails the test instead of CI, or once the
// test's cleanups ran. Not tb.Context: that one is done before the
// cleanups, and cleanups use these contexts. Under -short, which starts no
// test bed, it skips the test (Require).
func Context(tb testing.TB, timeout time.Duration) context.Context {
	tb.Helper()
	Require(tb)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	tb.Cleanup(cancel)
	return ctx
}
