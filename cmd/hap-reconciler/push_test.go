package main

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

const (
	lastSuccess = "hap_reconciler_job_last_success_timestamp_seconds"
	lastFailure = "hap_reconciler_job_last_failure_timestamp_seconds"
)

// kebFamilies are the gauges KEB's dashboards know.
var kebFamilies = []string{"keb_credentials_bindings_per_ga", "keb_shoots_per_credentials_binding", "keb_available_credentials_bindings"}

func TestRunPushesTheKEBMetricsToARealPushgateway(t *testing.T) {
	gateway := startPushgateway(t)
	l := smallLandscape()
	s := load(t, l, plantedConfig)
	s.mustRun(t, "run", "--pushgateway-url", gateway)

	families := scrape(t, gateway+"/metrics")
	group := map[string]string{"job": "hap-reconciler", "instance": s.World.Namespace}
	assertPlantedSeries(t, families, group)
	truth := fleetTruth(t, l)
	for _, name := range kebFamilies {
		got := values(families, name, group)
		if want := values(truth, name, nil); !maps.Equal(got, want) {
			t.Errorf("%s on the Pushgateway:\n got %v\nwant %v", name, got, want)
		}
		if all := values(families, name, nil); len(all) != len(got) {
			t.Errorf("%s: %d series on the Pushgateway, only %d in the group %v", name, len(all), len(got), group)
		}
	}
	succeeded := values(families, lastSuccess, group)
	if len(succeeded) != len(jobs.AllJobs) {
		t.Fatalf("last success after a good run: %v, want one per job", succeeded)
	}
	snapshot := values(families, "hap_reconciler_candidate_table_snapshot_timestamp_seconds", group)
	if len(snapshot) != 1 {
		t.Fatalf("the candidate table's snapshot time after a good run: %v, want one series", snapshot)
	}

	// A failing run replaces the group, yet the gateway still says when each
	// job last succeeded: the stale-job alert keeps its input.
	if _, err := s.db(t).Exec(testContext(t), `ALTER TABLE instances RENAME TO instances_away`); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := s.cli(t, "run", "--pushgateway-url", gateway); code != exitFailed {
		t.Fatalf("run without KEB's table: exit %d, want %d\n%s", code, exitFailed, stderr)
	}
	families = scrape(t, gateway+"/metrics")
	if failed := values(families, lastFailure, group); len(failed) != len(jobs.AllJobs) {
		t.Errorf("last failure after a failed run: %v, want one per job", failed)
	}
	if got := values(families, lastSuccess, group); !maps.Equal(got, succeeded) {
		t.Errorf("last success after a failed run:\n got %v\nwant %v (carried from the good run)", got, succeeded)
	}
	// The table keeps its age: the stale-table alert keeps its input.
	if got := values(families, "hap_reconciler_candidate_table_snapshot_timestamp_seconds", group); !maps.Equal(got, snapshot) {
		t.Errorf("the candidate table's snapshot time after a failed run:\n got %v\nwant %v (carried from the good run)", got, snapshot)
	}
}

func TestRunSucceedsWhenThePushgatewayIsDown(t *testing.T) {
	down := "http://" + closedAddress(t)
	l := smallLandscape()
	s := load(t, l, plantedConfig)
	code, _, stderr := s.cli(t, "run", "--pushgateway-url", down)
	if code != exitOK {
		t.Fatalf("run with the Pushgateway down: exit %d, want 0\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "pushing metrics to the Pushgateway failed") || !strings.Contains(stderr, down) {
		t.Errorf("the failed push is not logged with the gateway's address:\n%s", stderr)
	}
	// The run's work stands.
	want := normalize(hap.DecideCandidates(hap.NewTally(l.Snapshot()), policy(t, plantedConfig)))
	if got := s.candidateRows(t); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Errorf("candidate table after a run whose push failed:\n got %v\nwant %v", got, want)
	}
}

// alicloud is a pool of its own, planted so that its keb_ values are known
// by hand.
var alicloud = hap.Pool{HyperscalerType: "alicloud"}

// smallLandscape is a generated landscape of one GA plus the alicloud pool:
// ga-ali claims ali-a (2 clusters), ali-b (1) and ali-c (none); ali-free-1
// and ali-free-2 are free; ali-dirty waits for the cleanup.
func smallLandscape() *landscape.Landscape {
	l := landscape.Generate(landscape.Options{Seed: 5, GlobalAccounts: 1, ShootsPerGlobalAccount: 2, FreeBindingsPerPool: 1})
	now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range []struct {
		name     string
		clusters int
	}{{"ali-a", 2}, {"ali-b", 1}, {"ali-c", 0}} {
		l.AddBinding(landscape.BindingSpec{Name: b.name, Pool: alicloud, GlobalAccountID: "ga-ali"})
		for i := range b.clusters {
			runtime := fmt.Sprintf("rt-%s-%d", b.name, i)
			l.AddShoot(landscape.ShootSpec{BindingName: b.name, RuntimeID: runtime, GlobalAccountID: "ga-ali", Pool: alicloud})
			l.AddInstance(landscape.Instance{
				InstanceID: "inst-" + runtime, RuntimeID: runtime, GlobalAccountID: "ga-ali",
				SubscriptionSecretName: b.name, Provider: "Alicloud", ServicePlanName: "alicloud",
				ProvisioningParameters: "{}", CreatedAt: now, UpdatedAt: now,
			})
		}
	}
	l.AddBinding(landscape.BindingSpec{Name: "ali-free-1", Pool: alicloud})
	l.AddBinding(landscape.BindingSpec{Name: "ali-free-2", Pool: alicloud})
	l.AddBinding(landscape.BindingSpec{Name: "ali-dirty", Pool: alicloud, GlobalAccountID: "ga-gone", Dirty: true})
	return l
}

func aliBinding(name string) string {
	return series("credentials_binding", name, "eu_access", "false", "global_account_id", "ga-ali", "hyperscaler_type", "alicloud")
}

// assertPlantedSeries checks the keb_ values of the alicloud pool, counted
// by hand; where selects the series (a Pushgateway group), nil for all.
func assertPlantedSeries(t *testing.T, families []*dto.MetricFamily, where map[string]string) {
	t.Helper()
	want := map[string]map[string]float64{
		"keb_credentials_bindings_per_ga": {
			series("eu_access", "false", "global_account_id", "ga-ali", "hyperscaler_type", "alicloud"): 3,
		},
		"keb_shoots_per_credentials_binding": {aliBinding("ali-a"): 2, aliBinding("ali-b"): 1, aliBinding("ali-c"): 0},
		"keb_available_credentials_bindings": {series("eu_access", "false", "hyperscaler_type", "alicloud"): 2},
	}
	for name, series := range want {
		got := values(families, name, where)
		for key, v := range series {
			if value, ok := got[key]; !ok || value != v {
				t.Errorf("%s{%s} = %v (present %t), want %v", name, key, value, ok, v)
			}
		}
	}
}

// fleetTruth is what the metrics job must expose for l.
func fleetTruth(t *testing.T, l *landscape.Landscape) []*dto.MetricFamily {
	t.Helper()
	truth := hap.NewTally(l.Snapshot())
	m := metrics.New()
	candidates := hap.DecideCandidates(truth, policy(t, plantedConfig))
	m.SetFleet(hap.FleetOf(truth, candidates, hap.DecidePools(truth, candidates), nil))
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return families
}

func policy(t *testing.T, yaml string) hap.Policy {
	t.Helper()
	cfg := config.Default()
	if err := config.Parse([]byte(yaml), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	return cfg.Policy()
}

// series is a label set as values keys it: name=value pairs sorted by name.
func series(pairs ...string) string {
	var kv []string
	for i := 0; i+1 < len(pairs); i += 2 {
		kv = append(kv, pairs[i]+"="+pairs[i+1])
	}
	slices.Sort(kv)
	return strings.Join(kv, ",")
}

// values returns the samples of the family name whose labels include where,
// keyed by their other labels (see series).
func values(families []*dto.MetricFamily, name string, where map[string]string) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			var pairs []string
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := where[l.GetName()]; ok {
					if v != l.GetValue() {
						continue metric
					}
					matched++
					continue
				}
				pairs = append(pairs, l.GetName(), l.GetValue())
			}
			if matched == len(where) {
				out[series(pairs...)] = sampleValue(mf.GetType(), m)
			}
		}
	}
	return out
}

func sampleValue(typ dto.MetricType, m *dto.Metric) float64 {
	switch typ {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_UNTYPED:
		return m.GetUntyped().GetValue()
	}
	return m.GetGauge().GetValue()
}

func scrape(t *testing.T, url string) []*dto.MetricFamily {
	t.Helper()
	families, err := metrics.Scrape(testContext(t), url)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// startPushgateway starts Debian's Pushgateway on a free loopback port with
// storage of its own and returns its URL; it is stopped when the test ends.
func startPushgateway(t *testing.T) string {
	t.Helper()
	bin := ensureTool(t, "prometheus-pushgateway", "ensure-tools.sh")
	var log testbed.SyncBuffer
	cmd := exec.Command(bin, "--web.listen-address=127.0.0.1:0", "--log.format=json",
		"--persistence.file="+filepath.Join(t.TempDir(), "groups"))
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the Pushgateway: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	var listening map[string]any
	waitFor(t, "the Pushgateway to listen", func() bool {
		select {
		case <-exited:
			t.Fatalf("the Pushgateway exited:\n%s", log.String())
		default:
		}
		listening = logged(&log, "Listening on")
		return listening != nil
	})
	return fmt.Sprintf("http://%s", listening["address"])
}

// ensureTool returns the path of a tool, installing it with the project's
// script when the machine lacks it.
func ensureTool(t *testing.T, name, script string) string {
	t.Helper()
	if path, err := exec.LookPath(name); err == nil {
		return path
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", filepath.Join("..", "..", "hack", script)).CombinedOutput()
	if err != nil {
		t.Fatalf("%s is missing and hack/%s failed: %v\n%s", name, script, err, out)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s still missing after hack/%s: %v\n%s", name, script, err, out)
	}
	return path
}
