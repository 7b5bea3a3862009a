package report

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// A pool only entries with an input "*" lead to is marked in the table, so
// nobody orders accounts for a pool no runtime draws from.
func TestPoolsTableMarksUnreachablePools(t *testing.T) {
	var out bytes.Buffer
	rows := []hap.PoolRow{
		{HyperscalerType: "azure", Rules: []string{"azure"}},
		{HyperscalerType: "openstack", Shared: true, Rules: []string{"sap-converged-cloud(HR=*) -> S"}, Unreachable: true},
	}
	if err := WritePoolsTable(&out, rows, Layout{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || strings.Contains(lines[1], "UNREACHABLE") || !strings.Contains(lines[2], "UNREACHABLE") ||
		!strings.Contains(lines[2], "sap-converged-cloud(HR=*) -> S") {
		t.Fatalf("only the openstack pool is marked unreachable, with its rule:\n%s", out.String())
	}
}

type fakeHistory map[hap.Pool][]hap.PoolSample

func (f fakeHistory) PoolHistory(context.Context, time.Time) (map[hap.Pool][]hap.PoolSample, error) {
	return f, nil
}

type fakeRules []hap.NamedPool

func (f fakeRules) Pools([]hap.Pool) []hap.NamedPool { return f }

// The stored view takes each pool's latest recorded sample, joins the rules
// that lead there, lists a pool a rule names without a sample, and
// estimates from the history.
func TestStoredPoolsReadTheLatestSampleOfEachPool(t *testing.T) {
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	aws := hap.Pool{HyperscalerType: "aws"}
	var samples []hap.PoolSample
	for day := 10; day >= 0; day-- {
		samples = append(samples, hap.PoolSample{At: now.AddDate(0, 0, -day), Free: 20 + day, Claimed: 30 - day})
	}
	rules := fakeRules{{Pool: aws, Rules: []string{"aws"}}, {Pool: hap.Pool{HyperscalerType: "gcp"}, Rules: []string{"gcp"}}}
	rows, err := storedPools(context.Background(), fakeHistory{aws: samples}, rules, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rows %+v; want aws and gcp", rows)
	}
	got := rows[0]
	if got.HyperscalerType != "aws" || got.Free != 20 || got.Claimed != 30 || got.DaysLeft == nil || *got.DaysLeft != 20 ||
		len(got.Rules) != 1 {
		t.Errorf("aws: %+v; want the latest sample (20 free, 30 claimed), its rule and 20 days left at one a day", got)
	}
	if rows[1].HyperscalerType != "gcp" || rows[1].Free != 0 || rows[1].DaysLeft != nil {
		t.Errorf("gcp: %+v; want listed without bindings or estimate", rows[1])
	}
}
