package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus/push"
)

// PushJob is the Pushgateway grouping key's job label.
const PushJob = "hap-reconciler"

// Push replaces the run's group on the Pushgateway (PUT), grouped by job and
// instance as Prometheus documents for batch jobs; instance is the landscape,
// so series of bindings that disappeared go away with the next push. A
// failure is counted; it never undoes the run.
func (m *Metrics) Push(ctx context.Context, url, instance string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := push.New(url, PushJob).
		Grouping("instance", instance).
		Gatherer(m.Registry).
		PushContext(ctx)
	if err != nil {
		m.PushFailed()
		return fmt.Errorf("pushing to %s: %w", url, err)
	}
	return nil
}
