package kebrules

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

func TestDecide(t *testing.T) {
	held := []string{"b1", "b2", "b3"}
	for _, c := range []struct {
		name  string
		seen  Seen
		guard int
		want  Decision
	}{
		{"holds none", Seen{Limit: 3}, 0, Decision{ClaimNew: true}},
		{"off the allowlist: the first", Seen{Held: held, Counts: map[string]int{"b2": 5}}, 2, Decision{Binding: "b1"}},
		{"the most populated below the limit", Seen{Held: held, Counts: map[string]int{"b1": 1, "b2": 2, "b3": 3}, Limit: 3}, 0, Decision{Binding: "b2"}},
		{"a tie goes to the first in list order", Seen{Held: held, Counts: map[string]int{"b2": 1, "b3": 1}, Limit: 3}, 0, Decision{Binding: "b2"}},
		{"an empty binding is below the limit too", Seen{Held: held, Counts: map[string]int{"b1": 3, "b2": 4}, Limit: 3}, 0, Decision{Binding: "b3"}},
		{"all at the limit", Seen{Held: held, Counts: map[string]int{"b1": 3, "b2": 3, "b3": 4}, Limit: 3}, 0, Decision{ClaimNew: true}},
		{"the guard: enough bindings, none with an instance", Seen{Held: held, Counts: map[string]int{}, Limit: 3}, 3, Decision{Guarded: true}},
		{"the guard needs MinBindingsForGuard bindings", Seen{Held: held, Counts: map[string]int{}, Limit: 3}, 4, Decision{Binding: "b1"}},
		{"the guard lets a GA with an instance pass", Seen{Held: held, Counts: map[string]int{"b3": 1}, Limit: 3}, 2, Decision{Binding: "b3"}},
	} {
		if got := Decide(c.seen, c.guard); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestLeastUsed(t *testing.T) {
	for _, c := range []struct {
		seen Seen
		want string
	}{
		{Seen{}, ""},
		{Seen{Held: []string{"s1", "s2", "s3"}, Counts: map[string]int{"s1": 2, "s2": 1, "s3": 1}}, "s2"},
		{Seen{Held: []string{"s1", "s2"}, Counts: map[string]int{"s1": 1, "s2": 1}}, "s1"},
	} {
		if got := LeastUsed(c.seen); got != c.want {
			t.Errorf("LeastUsed(%v) = %q, want %q", c.seen, got, c.want)
		}
	}
}

func TestLimitForProvider(t *testing.T) {
	cfg := Config{Limits: map[string]int{"default": 4, "aws": 2, "openstack": 3}}
	for provider, want := range map[string]int{"aws": 2, "AWS": 2, "gcp": 4, "sap-converged-cloud": 3, "openstack": 3, "gdch": 4} {
		if got := cfg.LimitForProvider(provider); got != want {
			t.Errorf("LimitForProvider(%q) = %d, want %d", provider, got, want)
		}
	}
	if got := (Config{}).LimitForProvider("aws"); got != noLimit {
		t.Errorf("no limit set: %d, want %d", got, noLimit)
	}
}

func TestIsGlobalAccountAllowed(t *testing.T) {
	for _, c := range []struct {
		allowed []string
		want    bool
	}{{nil, false}, {[]string{"ga-2"}, false}, {[]string{"ga-1"}, true}, {[]string{"ga-2", "*"}, true}} {
		if got := (Config{Allowed: c.allowed}).IsGlobalAccountAllowed("ga-1"); got != c.want {
			t.Errorf("allowlist %v: %t, want %t", c.allowed, got, c.want)
		}
	}
}

func TestSelectors(t *testing.T) {
	for got, want := range map[string]string{
		TenantSelector(hap.Pool{HyperscalerType: "aws"}, "ga-1"):        "hyperscalerType=aws,!euAccess,shared!=true,!dirty,tenantName=ga-1",
		ClaimSelector(hap.Pool{HyperscalerType: "aws", EUAccess: true}): "hyperscalerType=aws,euAccess=true,shared!=true,!dirty,!tenantName",
		SharedSelector(hap.Pool{HyperscalerType: "openstack_eu-de-1"}):  "hyperscalerType=openstack_eu-de-1,!euAccess,shared=true",
	} {
		if got != want {
			t.Errorf("selector %q, want %q", got, want)
		}
	}
}
