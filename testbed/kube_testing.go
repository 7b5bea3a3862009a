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
