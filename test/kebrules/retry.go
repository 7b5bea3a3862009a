package kebrules

import (
	"context"
	"time"
)

// ResolveStepTimeout is how long KEB retries its resolve step for one
// provisioning before it fails it (resolveSubscriptionSecretTimeout,
// cmd/broker/provisioning.go).
const ResolveStepTimeout = time.Minute

// Requeue is KEB's operation queue running a step again after the interval
// the step returned (OperationManager.RetryOperation): the worker is free
// meanwhile, and the step runs again once the interval has passed. It
// returns ctx's error when ctx ends first.
func Requeue(ctx context.Context, after time.Duration) error {
	t := time.NewTimer(after)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
