package hap

import (
	"strings"
	"testing"
)

// The cases below are facts from KEB's source: its label selectors
// (internal/subscriptions/label_selector.go), LimitForProvider
// (common/hyperscaler/multiaccount/config.go and its tests), the count per
// binding (GetInstanceCountPerBinding), the guard and the choice
// (internal/process/provisioning/resolve_credentials_binding.go) and the
// shared pick (common/gardener/client.go,
// GetLeastUsedCredentialsBindingFromSecretBindings).

func TestLabelValuesAsKEBsSelectorsReadThem(t *testing.T) {
	base := map[string]string{LabelHyperscalerType: "aws", LabelTenantName: "ga"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for key, val := range base {
			m[key] = val
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name      string
		labels    map[string]string
		candidate bool   // one of the GA's candidates
		noPool    string // the label OutOfPool names, "" for none
	}{
		{"plain", base, true, ""},
		{"dirty: false is a dirty label all the same", with(LabelDirty, "false"), false, LabelDirty},
		{"dirty: true is a released account", with(LabelDirty, "true"), false, ""},
		{"euAccess: false is neither pool", with(LabelEUAccess, "false"), false, LabelEUAccess},
		{"euAccess: True is not true", with(LabelEUAccess, "True"), false, LabelEUAccess},
		{"euAccess: true is the EU pool", with(LabelEUAccess, "true"), true, ""},
		{"shared: yes is an ordinary dedicated binding", with(LabelShared, "yes"), true, ""},
		{"shared: True is an ordinary dedicated binding", with(LabelShared, "True"), true, ""},
		{"tenantName present but empty", with(LabelTenantName, ""), false, LabelTenantName},
		{"no hyperscalerType", with(LabelHyperscalerType, ""), false, LabelHyperscalerType},
		{"internal: any value, still the GA's", with(LabelInternal, "maybe"), true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := BindingFromLabels("b", tc.labels, "aws", "1")
			if err != nil {
				t.Fatal(err)
			}
			f := &fleet{s: Snapshot{Bindings: []Binding{b}}}
			rows := DecideCandidates(f.tally(), limits(3, nil))
			if got := len(rows) == 1 && rows[0].GlobalAccountID == "ga"; got != tc.candidate {
				t.Fatalf("candidate = %v, want %v (rows %+v)", got, tc.candidate, rows)
			}
			var noPool []Finding
			for _, f := range DecideDrift(f.tally(), limits(3, nil), rows) {
				if f.Kind == KindInNoPool {
					noPool = append(noPool, f)
				}
			}
			switch {
			case tc.noPool == "" && len(noPool) > 0:
				t.Fatalf("unexpected finding %+v", noPool)
			case tc.noPool != "" && (len(noPool) != 1 || !strings.Contains(noPool[0].Detail, tc.noPool)):
				t.Fatalf("want one %s finding naming %s, got %+v", KindInNoPool, tc.noPool, noPool)
			case tc.noPool != "" && tc.labels[tc.noPool] != "" && !strings.Contains(noPool[0].Detail, `"`+tc.labels[tc.noPool]+`"`):
				t.Fatalf("finding %q does not name the value %q", noPool[0].Detail, tc.labels[tc.noPool])
			}
			if tc.noPool != "" && Releasable(b) {
				t.Fatal("a binding in no pool of KEB's must never be released")
			}
		})
	}
}

func TestLimitForProviderAsKEB(t *testing.T) {
	tests := []struct {
		name     string
		policy   Policy
		provider string
		want     int
	}{
		{"provider limit", Policy{DefaultLimit: 100, ProviderLimits: map[string]int{"aws": 3}}, "aws", 3},
		{"upper case", Policy{DefaultLimit: 100, ProviderLimits: map[string]int{"aws": 3}}, "AWS", 3},
		{"openstack", Policy{DefaultLimit: 100, ProviderLimits: map[string]int{"openstack": 75}}, "openstack", 75},
		{"sapconvergedcloud", Policy{DefaultLimit: 100, ProviderLimits: map[string]int{"openstack": 75}}, "sapconvergedcloud", 75},
		{"sap-converged-cloud", Policy{DefaultLimit: 100, ProviderLimits: map[string]int{"openstack": 75}}, "sap-converged-cloud", 75},
		{"0 falls back to default", Policy{DefaultLimit: 200, ProviderLimits: map[string]int{"openstack": 0}}, "openstack", 200},
		{"unknown provider gets default", Policy{DefaultLimit: 100}, "unknown", 100},
		{"gdch has no field: default", Policy{DefaultLimit: 100, ProviderLimits: map[string]int{"aws": 3}}, "gdch", 100},
		{"default 0 means no limit", Policy{}, "aws", NoLimit},
		{"provider 0 and default 0", Policy{ProviderLimits: map[string]int{"gcp": 0}}, "gcp", NoLimit},
		{"amazon is no spelling KEB knows", Policy{DefaultLimit: 9, ProviderLimits: map[string]int{"aws": 3}}, "amazon", 9},
	}
	for _, tc := range tests {
		if got := tc.policy.LimitForProvider(tc.provider); got != tc.want {
			t.Errorf("%s: LimitForProvider(%q) = %d, want %d", tc.name, tc.provider, got, tc.want)
		}
	}
}

func TestTheGAsOwnCountDecides(t *testing.T) {
	// A holds 2 of the GA's clusters and 5 of another GA's; B holds 3 of
	// the GA's. KEB counts the GA's own: B is the most populated.
	f := new(fleet).binding("A", "ga", awsPool).instances("A", "ga", 2).instances("A", "other", 5).
		binding("B", "ga", awsPool).instances("B", "ga", 3)
	rows := DecideCandidates(f.tally(), limits(10, nil))
	if c := choice(t, rows, "ga", awsPool); c.Binding != "B" {
		t.Fatalf("got %+v, want B: other GAs' rows do not count toward this GA's choice", c)
	}
	for _, r := range rows {
		if r.BindingName == "A" && r.DBCount != 2 {
			t.Fatalf("A's count for the GA is %d, want its own 2", r.DBCount)
		}
	}
}

func TestKEBsGuard(t *testing.T) {
	three := func() *fleet {
		return new(fleet).binding("A", "ga", awsPool).binding("B", "ga", awsPool).binding("C", "ga", awsPool)
	}
	guard3 := Policy{AllowAll: true, DefaultLimit: 10, MinBindingsForGuard: 3}
	tests := []struct {
		name   string
		fleet  *fleet
		policy Policy
		want   Choice
	}{
		{"three bindings, no instance of the GA's own", three(), guard3, Choice{Guarded: true}},
		{"shoots do not lift it: KEB counts the database", three().shoots("A", "ga", 2), guard3, Choice{Guarded: true}},
		{"another GA's instances do not lift it", three().instances("A", "other", 2), guard3, Choice{Guarded: true}},
		{"one instance of its own lifts it", three().instances("B", "ga", 1), guard3, Choice{Binding: "B"}},
		{"fewer bindings than the guard's minimum", new(fleet).binding("A", "ga", awsPool), guard3, Choice{Binding: "A"}},
		{"guard off", three(), Policy{AllowAll: true, DefaultLimit: 10}, Choice{Binding: "A"}},
		{"GA not on the allowlist: no guard", three(), Policy{Allowed: map[string]bool{"x": true}, DefaultLimit: 10, MinBindingsForGuard: 3}, Choice{Binding: "A"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := DecideCandidates(tc.fleet.tally(), tc.policy)
			if got := choice(t, rows, "ga", awsPool); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			guarded := 0
			for _, f := range DecideDrift(tc.fleet.tally(), tc.policy, rows) {
				if f.Kind == KindProvisioningGuarded {
					guarded++
				}
			}
			if (guarded == 1) != tc.want.Guarded {
				t.Fatalf("%d %s findings", guarded, KindProvisioningGuarded)
			}
		})
	}
}

func TestSharedPickAsKEB(t *testing.T) {
	// Byte order puts "aws-1b" before "aws1a" ('-' < '1'); a non-C collation
	// would not. Shoots naming a binding through spec.secretBindingName are
	// not counted by KEB's shared pick.
	f := new(fleet).binding("aws1a", "", awsPool, shared).binding("aws-1b", "", awsPool, shared)
	if c := choice(t, DecideCandidates(f.tally(), Policy{}), "", awsPool); c.Binding != "aws-1b" {
		t.Fatalf("tie: got %+v, want aws-1b, first in byte order", c)
	}
	f.s.Shoots = append(f.s.Shoots, Shoot{Name: "old", BindingName: "aws-1b", ViaSecretBinding: true})
	if c := choice(t, DecideCandidates(f.tally(), Policy{}), "", awsPool); c.Binding != "aws-1b" {
		t.Fatalf("a secretBindingName shoot counted: got %+v", c)
	}
	f.shoots("aws-1b", "x", 1)
	if c := choice(t, DecideCandidates(f.tally(), Policy{}), "", awsPool); c.Binding != "aws1a" {
		t.Fatalf("got %+v, want aws1a, the least used", c)
	}
}

func TestRankOneDeviationIsNamed(t *testing.T) {
	// A: 5 instances of the GA's own, 9 shoots; B: 4 and 4; limit 8. KEB
	// picks A (5 < 8, most populated); the job counts A's 9 shoots: full, B.
	f := new(fleet).binding("A", "ga", awsPool).instances("A", "ga", 5).shoots("A", "ga", 9).
		binding("B", "ga", awsPool).clusters("B", "ga", 4)
	rows := DecideCandidates(f.tally(), limits(8, nil))
	devs := RankOneDeviations(rows)
	if len(devs) != 1 || devs[0].Job.Binding != "B" || devs[0].KEB.Binding != "A" || !strings.Contains(devs[0].Reason, "9 shoot(s)") {
		t.Fatalf("deviations %+v", devs)
	}
	n := 0
	for _, f := range DecideDrift(f.tally(), limits(8, nil), rows) {
		if f.Kind == KindRankOneDeviation && f.GlobalAccountID == "ga" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d %s findings, want 1", n, KindRankOneDeviation)
	}
	// A: 5 and 5; B: 3 of the GA's own and 6 shoots (one another GA's);
	// limit 10. Nobody is near the limit: the job ranks as KEB does, A.
	below := new(fleet).binding("A", "ga", awsPool).clusters("A", "ga", 5).
		binding("B", "ga", awsPool).instances("B", "ga", 3).shoots("B", "ga", 6)
	if devs := RankOneDeviations(DecideCandidates(below.tally(), limits(10, nil))); len(devs) != 0 {
		t.Fatalf("more shoots than instances below the limit moved rank 1: %+v", devs)
	}
	same := new(fleet).binding("A", "ga", awsPool).clusters("A", "ga", 5).binding("B", "ga", awsPool).clusters("B", "ga", 4)
	if devs := RankOneDeviations(DecideCandidates(same.tally(), limits(8, nil))); len(devs) != 0 {
		t.Fatalf("no deviation when both sides agree: %+v", devs)
	}
}
