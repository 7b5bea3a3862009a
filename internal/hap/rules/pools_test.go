package rules

import (
	"reflect"
	"slices"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

func TestPools(t *testing.T) {
	pool := func(ht string) hap.Pool { return hap.Pool{HyperscalerType: ht} }
	euPool := func(ht string) hap.Pool { return hap.Pool{HyperscalerType: ht, EUAccess: true} }
	existing := []hap.Pool{
		pool("openstack_eu-de-1"), pool("openstack_eu-de-2"), pool("openstack_eu-de-1"), // listed twice
		euPool("openstack_eu-de-3"), // euAccess, the entry is not
		pool("openstack"),           // no region to append
		pool("openstack_eu_de_1"),   // a region has no "_"
		pool("openstack_"),          // nor is it empty
		pool("aws_cf-eu10_eu-central-1"), pool("aws_cf-eu10"), pool("gcp_cf-sa30_x"),
	}
	cases := []struct {
		name  string
		rules []string
		want  []PoolRules
	}{
		{"fixed pools are named even when absent", []string{"aws", "aws(PR=cf-eu11) -> EU", "gcp(PR=cf-sa30) -> PR", "build-runtime-aws"},
			[]PoolRules{
				{Pool: pool("aws"), Rules: []string{"aws", "build-runtime-aws"}},
				{Pool: euPool("aws"), Rules: []string{"aws(PR=cf-eu11) -> EU"}},
				{Pool: pool("gcp_cf-sa30"), Rules: []string{"gcp(PR=cf-sa30) -> PR"}},
			}},
		{"an appended region the entry does not fix expands over existing pools", []string{"sap-converged-cloud -> S, HR"},
			[]PoolRules{
				{Pool: pool("openstack_eu-de-1"), Shared: true, Rules: []string{"sap-converged-cloud -> S, HR"}},
				{Pool: pool("openstack_eu-de-2"), Shared: true, Rules: []string{"sap-converged-cloud -> S, HR"}},
			}},
		{"the older wildcard form names the pool openstack_* today", []string{"sap-converged-cloud(HR=*) -> S, HR"},
			[]PoolRules{{Pool: pool("openstack_*"), Shared: true, Rules: []string{"sap-converged-cloud(HR=*) -> S, HR"}, Unreachable: true}}},
		{"a pool only \"*\" inputs lead to is unreachable; one real entry makes it reachable",
			[]string{"sap-converged-cloud(HR=*) -> S", "azure(PR=*)", "azure(PR=cf-ch20) -> EU", "azure_lite"},
			[]PoolRules{
				{Pool: pool("azure"), Rules: []string{"azure(PR=*)", "azure_lite"}},
				{Pool: euPool("azure"), Rules: []string{"azure(PR=cf-ch20) -> EU"}},
				{Pool: pool("openstack"), Shared: true, Rules: []string{"sap-converged-cloud(HR=*) -> S"}, Unreachable: true},
			}},
		{"gdch names the gdch pool; a plan the table does not have names none",
			[]string{"gdch -> EU", "newplan -> S"},
			[]PoolRules{{Pool: euPool("gdch"), Rules: []string{"gdch -> EU"}}}},
		{"two appended regions", []string{"aws -> PR, HR"},
			[]PoolRules{{Pool: pool("aws_cf-eu10_eu-central-1"), Rules: []string{"aws -> PR, HR"}}}},
		{"a fixed and an open part", []string{"gcp(PR=cf-sa30) -> PR, HR"},
			[]PoolRules{{Pool: pool("gcp_cf-sa30_x"), Rules: []string{"gcp(PR=cf-sa30) -> PR, HR"}}}},
		{"trial names a pool on each provider a request may pick", []string{"trial -> S"},
			[]PoolRules{
				{Pool: pool("aws"), Shared: true, Rules: []string{"trial -> S"}},
				{Pool: pool("azure"), Shared: true, Rules: []string{"trial -> S"}},
				{Pool: pool("gcp"), Shared: true, Rules: []string{"trial -> S"}},
			}},
		{"free on AWS and Azure; shared and dedicated bindings of one pool stay apart", []string{"free", "aws(PR=cf-eu10) -> S"},
			[]PoolRules{
				{Pool: pool("aws"), Rules: []string{"free"}},
				{Pool: pool("aws"), Shared: true, Rules: []string{"aws(PR=cf-eu10) -> S"}},
				{Pool: pool("azure"), Rules: []string{"free"}},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs, errs := parse(tc.rules)
			if len(errs) != 0 {
				t.Fatal(joinErrors(errs))
			}
			if got := rs.Pools(existing); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestPoolsCoverEveryMatch: wherever the initial configuration sends a
// runtime, Pools names that pool once the pool exists.
func TestPoolsCoverEveryMatch(t *testing.T) {
	rs, errs := parse(initialConfiguration)
	if len(errs) != 0 {
		t.Fatal(joinErrors(errs))
	}
	regions := []struct{ pr, hr string }{{"cf-eu10", "eu-central-1"}, {"cf-eu11", "eu-central-1"}, {"cf-ch20", "switzerlandnorth"},
		{"cf-sa30", "me-central2"}, {"cf-eu20", "eu-de-1"}, {"cf-jp30", "ap-jp-1"}}
	var landed []Result
	var existing []hap.Pool
	for _, plan := range plans() {
		for _, provider := range possibleProviders(plan) {
			for _, r := range regions {
				if got, ok := rs.MatchProvider(plan, provider, r.pr, r.hr); ok {
					landed = append(landed, got)
					existing = append(existing, got.Pool)
				}
			}
		}
	}
	type target struct {
		pool   hap.Pool
		shared bool
	}
	named := map[target][]string{}
	for _, p := range rs.Pools(existing) {
		named[target{p.Pool, p.Shared}] = p.Rules
	}
	for _, got := range landed {
		if !slices.Contains(named[target{got.Pool, got.Shared}], got.Rule) {
			t.Errorf("%q sends a runtime to %v shared=%v; Pools names it for %q", got.Rule, got.Pool, got.Shared, named[target{got.Pool, got.Shared}])
		}
	}
	if len(landed) < 40 {
		t.Fatalf("only %d runtimes landed; the check is too thin", len(landed))
	}
}
