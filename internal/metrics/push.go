package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/push"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/kyma-project/hap-reconciler/internal/redact"
)

// pushJob is the Pushgateway grouping key's job label.
const pushJob = "hap-reconciler"

const (
	lastSuccessName        = "hap_reconciler_job_last_success_timestamp_seconds"
	candidatesSnapshotName = "hap_reconciler_candidate_table_snapshot_timestamp_seconds"
)

// ErrNotCarried marks a push that went through although the previous group
// could not be read: jobs that did not succeed in this run have no
// last-success series on the gateway until they succeed again.
var ErrNotCarried = errors.New("the last-success timestamps of earlier runs were not carried forward")

// Push replaces the run's group on the Pushgateway (PUT), grouped by job and
// instance as Prometheus documents for batch jobs; instance is the landscape,
// so series of bindings that disappeared go away with the next push. A
// failure is counted; it never undoes the run.
//
// Replacing the group would also drop the last success of a job that failed
// in this run (or was not selected), and with it the stale-job alert's
// input. So the run first reads the group it replaces and carries those
// timestamps forward: the gateway then always shows when each job last
// succeeded, whichever pod did it.
//
// The URL may carry credentials (user:password@, as basic auth): its errors
// show it redacted, and so must whatever the caller logs (redact.String).
func (m *Metrics) Push(ctx context.Context, url, instance string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// The client's errors repeat the URL they asked, password included,
	// and the gateway's answer, which may echo the Authorization header.
	secrets := append(redact.BasicAuth(url), redact.Spellings(redact.Dissect(url).Passwords...)...)
	carryErr := redact.Scrub(m.carryLastSuccess(ctx, url, instance), secrets)
	err := push.New(url, pushJob).
		Grouping("instance", instance).
		Gatherer(m.Registry).
		PushContext(ctx)
	if err != nil {
		m.PushFailed()
		return fmt.Errorf("pushing to %s: %w", redact.String(url), redact.Scrub(err, secrets))
	}
	if carryErr != nil {
		return fmt.Errorf("%w: %w", ErrNotCarried, carryErr)
	}
	return nil
}

// carryLastSuccess sets, for every job the gateway's group has a last
// success for and this run has none, the gateway's value.
func (m *Metrics) carryLastSuccess(ctx context.Context, url, instance string) error {
	families, err := Scrape(ctx, strings.TrimSuffix(url, "/")+"/metrics")
	if err != nil {
		return fmt.Errorf("reading the previous group: %w", err)
	}
	group := map[string]string{"job": pushJob, "instance": instance}
	previous := samples(families, lastSuccessName, group, "job_name")
	previousSnapshot := samples(families, candidatesSnapshotName, group, "")
	if len(previous) == 0 && len(previousSnapshot) == 0 {
		return nil
	}
	current, err := m.Registry.Gather()
	if err != nil {
		return fmt.Errorf("gathering this run's metrics: %w", err)
	}
	succeeded := samples(current, lastSuccessName, nil, "job_name")
	for job, at := range previous {
		if _, ok := succeeded[job]; !ok {
			m.lastSuccess.WithLabelValues(job).Set(at)
		}
	}
	// The candidate table keeps its age whichever run pushes next: a run
	// without the candidates job must not make the table look new or gone.
	if at, ok := previousSnapshot[""]; ok && len(samples(current, candidatesSnapshotName, nil, "")) == 0 {
		m.candidatesSnapshot.WithLabelValues().Set(at)
	}
	return nil
}

// Scrape reads an exposition endpoint such as a Pushgateway's or serve's
// /metrics.
func Scrape(ctx context.Context, url string) ([]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(expfmt.FmtText))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	var families []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			return families, nil
		} else if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", url, err)
		}
		families = append(families, mf)
	}
}

// samples returns the gauge values of the family name whose labels include
// where, by the value of the label key.
func samples(families []*dto.MetricFamily, name string, where map[string]string, key string) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, metric := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range metric.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if matches(labels, where) {
				out[labels[key]] = metric.GetGauge().GetValue()
			}
		}
	}
	return out
}

func matches(labels, where map[string]string) bool {
	for k, v := range where {
		if labels[k] != v {
			return false
		}
	}
	return true
}
