package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestServeRunsTheJobsOnScheduleAndServesTheirMetrics(t *testing.T) {
	s := load(t, smallLandscape(), plantedConfig+everyJobOn("@every 1s"))
	ctx, stop := context.WithCancel(testContext(t))
	var log testbed.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		args := append([]string{"serve", "--listen", "127.0.0.1:0"}, s.Flags()...)
		exit <- execute(ctx, args, &log, io.Discard, func(string) string { return "" })
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stop()
			<-exit
		}
	})
	base := "http://" + listenAddress(t, &log)

	if code := httpStatus(base + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d, want 200", code)
	}
	waitFor(t, "/readyz to answer 200", func() bool { return httpStatus(base+"/readyz") == http.StatusOK })

	// Every job runs on its schedule; the metrics job's run sets the keb_
	// series.
	families := scrapeWhen(t, base+"/metrics", "every job to succeed once", func(f []*dto.MetricFamily) bool {
		return len(values(f, lastSuccess, nil)) == len(jobs.AllJobs)
	})
	assertPlantedSeries(t, families, nil)
	assertPromtoolClean(t, base+"/metrics")

	// A binding that disappears from Gardener between two runs disappears
	// from /metrics with the next run.
	deleteBinding(t, s.World.Namespace, "ali-c")
	families = scrapeWhen(t, base+"/metrics", "the series of the deleted binding to go", func(f []*dto.MetricFamily) bool {
		_, present := values(f, "keb_shoots_per_credentials_binding", nil)[aliBinding("ali-c")]
		return !present
	})
	perGA := series("eu_access", "false", "global_account_id", "ga-ali", "hyperscaler_type", "alicloud")
	if n := values(families, "keb_credentials_bindings_per_ga", nil)[perGA]; n != 2 {
		t.Errorf("bindings of ga-ali after one disappeared: %v, want 2", n)
	}

	// SIGTERM: the process stops cleanly.
	stop()
	stopped = true
	select {
	case code := <-exit:
		if code != exitOK {
			t.Errorf("serve after SIGTERM: exit %d, want 0\n%s", code, log.String())
		}
	case <-testContext(t).Done():
		t.Fatalf("serve did not stop after SIGTERM:\n%s", log.String())
	}
}

func TestServeStopsSchedulingAndLetsTheRunningJobFinish(t *testing.T) {
	l := smallLandscape()
	s := load(t, l, plantedConfig+schedules("@every 1h", "@every 1s", "@every 1h", "@every 1h"))
	var log testbed.SyncBuffer
	env, ln := s.openToServe(t, &log, dryRunFlags{})
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	env.Runner.BeforeAct = func(job string) {
		if job == jobs.JobCandidates {
			once.Do(func() { close(entered) })
			<-release
		}
	}
	ctx, sigterm := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { done <- env.Serve(ctx, ln) }()
	released := false
	t.Cleanup(func() {
		if !released {
			sigterm()
			close(release)
			if err := <-done; err != nil {
				t.Logf("after the test: %v", err)
			}
		}
	})
	base := "http://" + listenAddress(t, &log)
	select {
	case <-entered:
	case <-testContext(t).Done():
		t.Fatalf("the scheduled candidates run never started:\n%s", log.String())
	}

	sigterm()
	waitFor(t, "/readyz to report the shutdown", func() bool { return httpStatus(base+"/readyz") == http.StatusServiceUnavailable })
	select {
	case err := <-done:
		t.Fatalf("serve returned while a job was running: %v", err)
	default:
	}
	if rows := s.candidateRows(t); len(rows) != 0 {
		t.Fatalf("the candidate table was written before the job acted: %d rows", len(rows))
	}

	close(release)
	released = true
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-testContext(t).Done():
		t.Fatalf("serve did not stop once the job finished:\n%s", log.String())
	}
	want := normalize(hap.DecideCandidates(hap.NewTally(l.Snapshot()), policy(t, plantedConfig)))
	if got := s.candidateRows(t); len(got) != len(want) || len(got) == 0 {
		t.Errorf("the running job did not finish its work: %d candidate rows, want %d\n%s", len(got), len(want), log.String())
	}
	if n := strings.Count(log.String(), `"msg":"job done","job":"candidates"`); n != 1 {
		t.Errorf("candidates finished %d times, want once (no run starts after SIGTERM)\n%s", n, log.String())
	}
}

// everyJobOn is the configuration's schedules block with every job of the
// Registry on spec.
func everyJobOn(spec string) string {
	var b strings.Builder
	b.WriteString("schedules:\n")
	for _, job := range jobs.AllJobs {
		fmt.Fprintf(&b, "  %s: %q\n", job, spec)
	}
	return b.String()
}

// schedules is the configuration's schedules block; the shadow job runs
// on the candidates' schedule, the table it compares with.
func schedules(drift, candidates, release, metrics string) string {
	return fmt.Sprintf("schedules:\n  drift: %q\n  candidates: %q\n  shadow: %q\n  release: %q\n  metrics: %q\n",
		drift, candidates, candidates, release, metrics)
}

// scrapeWhen scrapes url until cond holds and returns that scrape.
func scrapeWhen(t *testing.T, url, what string, cond func([]*dto.MetricFamily) bool) []*dto.MetricFamily {
	t.Helper()
	var last []*dto.MetricFamily
	waitFor(t, what, func() bool {
		f, err := metrics.Scrape(testContext(t), url)
		if err != nil {
			return false
		}
		last = f
		return cond(f)
	})
	return last
}

// assertPromtoolClean runs `promtool check metrics` on the exposition at url.
func assertPromtoolClean(t *testing.T, url string) {
	t.Helper()
	promtool := ensureTool(t, "promtool", "install-promtool.sh")
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func deleteBinding(t *testing.T, namespace, name string) {
	t.Helper()
	client, err := dynamic.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	err = client.Resource(testbed.CredentialsBindingsResource).Namespace(namespace).Delete(testContext(t), name, metav1.DeleteOptions{})
	if err != nil {
		t.Fatalf("deleting binding %s: %v", name, err)
	}
}

func httpStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// listenAddress waits for serve's "serving" log line and returns its address.
func listenAddress(t *testing.T, log *testbed.SyncBuffer) string {
	t.Helper()
	var entry map[string]any
	waitFor(t, "serve to listen", func() bool {
		entry = logged(log, "serving")
		return entry != nil
	})
	return fmt.Sprint(entry["listen"])
}

// logged returns the first JSON log line of log with message msg, or nil.
func logged(log *testbed.SyncBuffer, msg string) map[string]any {
	sc := bufio.NewScanner(strings.NewReader(log.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var entry map[string]any
		if json.Unmarshal(sc.Bytes(), &entry) == nil && entry["msg"] == msg {
			return entry
		}
	}
	return nil
}

// waitFor waits up to a minute for done (testbed.Eventually).
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	testbed.Eventually(t, time.Minute, what, func() (bool, string) { return done(), "not yet" })
}
