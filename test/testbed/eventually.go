package testbed

import (
	"context"
	"testing"
	"time"
)

// Eventually polls cond until it holds, failing the test once within has
// passed; cond says what it saw, for the failure message. It is how a test
// waits for something another goroutine or process brings about: on the
// condition, never on a fixed sleep.
func Eventually(tb testing.TB, within time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	saw := "nothing yet"
	err := pollUntil(ctx, 20*time.Millisecond, func(context.Context) (bool, error) {
		ok, s := cond()
		saw = s
		return ok, nil
	})
	if err != nil {
		tb.Fatalf("%s: not within %s; last saw %s", what, within, saw)
	}
}
