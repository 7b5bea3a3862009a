package bench

import (
	"cmp"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/test/jobstest"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// seriesSize is the landscape TestSeriesPerFamily counts on:
// HAP_SERIES_SIZE=XL gives the figures docs/metrics.md reports.
func seriesSize(t *testing.T) Size {
	t.Helper()
	sizes, err := ParseSizes(cmp.Or(os.Getenv("HAP_SERIES_SIZE"), "S"))
	if err != nil || len(sizes) != 1 {
		t.Fatalf("HAP_SERIES_SIZE: %v (want one size)", err)
	}
	return sizes[0]
}

// TestSeriesPerFamily counts the series each family exposes once the drift
// and metrics jobs ran on the benchmark's landscape, held in memory (the
// fakes of jobstest stand for Gardener and the database), with the
// benchmark's configuration. Per binding, only the families a user needs
// there remain: Gardener's shoots (keb_shoots_per_credentials_binding) and
// the open drift findings; KEB exports the instances per binding itself.
func TestSeriesPerFamily(t *testing.T) {
	size := seriesSize(t)
	l := Generate(size, 1)
	snapshot := l.Snapshot()
	g, store := jobstest.NewGardener(), jobstest.NewStore()
	for _, b := range l.Bindings {
		g.PutBinding(b.Name, b.Labels)
	}
	for _, s := range snapshot.Shoots {
		g.PutShoot(s)
	}
	store.Instances = snapshot.Instances

	cfg := config.Default()
	if err := config.Parse([]byte(runConfig), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	runner := jobs.NewRunner(cfg.Jobs, jobs.Ports{Gardener: g, Store: store, Metrics: m, Log: zap.NewNop(), Now: time.Now}, nil)
	if err := runner.Run(context.Background(), jobs.Options{Jobs: []string{jobs.JobDrift, jobs.JobMetrics}}); err != nil {
		t.Fatal(err)
	}
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	total := 0
	for _, f := range families {
		counts[f.GetName()] = len(f.GetMetric())
		total += len(f.GetMetric())
	}
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	slices.Sort(names)
	t.Logf("%s: %d bindings, %d shoots, %d global accounts", size.Name, len(l.Bindings), len(l.Shoots), len(l.GlobalAccounts))
	for _, name := range names {
		t.Logf("%8d  %s", counts[name], name)
	}
	t.Logf("%8d  in all", total)
	for _, f := range kebSeries(l) {
		t.Logf("KEB's own: %8d  %s", f.series, f.name)
	}

	for _, dropped := range []string{"hap_reconciler_instances_per_credentials_binding", "hap_reconciler_credentials_binding_limit"} {
		if n, ok := counts[dropped]; ok {
			t.Errorf("%s: %d series; KEB exports the instances per binding, and the limit follows from the provider", dropped, n)
		}
	}
	for _, kept := range []string{"keb_credentials_bindings_per_ga", "keb_shoots_per_credentials_binding", "keb_available_credentials_bindings"} {
		if counts[kept] == 0 {
			t.Errorf("%s: no series", kept)
		}
	}
}

type kebFamily struct {
	name   string
	series int
}

// kebSeries counts the series KEB's own collector exports on l
// (CredentialsBindingsCollector in KEB's internal/metrics/
// credentials_bindings_collector.go): instances per binding that has an
// active instance (updateInstancesMetrics, keyed by binding), claimed
// bindings per hyperscaler type and tenant, and the available, dirty and
// shared ones per hyperscaler type.
func kebSeries(l *landscape.Landscape) []kebFamily {
	withInstances := map[string]bool{}
	for _, c := range l.Snapshot().Instances {
		if c.BindingName != "" && c.Active > 0 {
			withInstances[c.BindingName] = true
		}
	}
	claimed, types := map[[2]string]bool{}, map[string]bool{}
	for _, b := range l.Bindings {
		types[b.Labels[hap.LabelHyperscalerType]] = true
		if tenant, ok := b.Labels[hap.LabelTenantName]; ok {
			claimed[[2]string{b.Labels[hap.LabelHyperscalerType], tenant}] = true
		}
	}
	return []kebFamily{
		{"kcp_keb_v2_instances_per_credentials_binding", len(withInstances)},
		{"kcp_keb_v2_claimed_credentials_bindings", len(claimed)},
		{"kcp_keb_v2_{available,dirty,shared}_credentials_bindings, each at most", len(types)},
	}
}
