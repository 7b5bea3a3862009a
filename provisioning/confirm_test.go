package provisioning

import (
	"strings"
	"testing"
)

// The selectors are KEB's own (internal/subscriptions/label_selector.go,
// BuildForTenantMatching), byte for byte.
func TestTenantSelectorIsKEBs(t *testing.T) {
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{GlobalAccountID: "ga-1", HyperscalerType: "aws"}, "hyperscalerType=aws,!euAccess,shared!=true,!dirty,tenantName=ga-1"},
		{Request{GlobalAccountID: "ga-1", HyperscalerType: "gcp_cf-sa30", EUAccess: true}, "hyperscalerType=gcp_cf-sa30,euAccess=true,shared!=true,!dirty,tenantName=ga-1"},
		{Request{HyperscalerType: "aws"}, "hyperscalerType=aws,!euAccess,shared=true"},
		{Request{HyperscalerType: "azure", EUAccess: true}, "hyperscalerType=azure,euAccess=true,shared=true"},
	} {
		if got := c.req.tenantSelector(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.req, got, c.want)
		}
	}
}

// A binding is fit exactly when KEB's selector for the request returns it
// and its provider is the runtime's: each label KEB reads, each way it can
// be wrong.
func TestABindingIsFitWhenKEBsSelectorReturnsIt(t *testing.T) {
	dedicated := Request{GlobalAccountID: "ga-1", HyperscalerType: "aws", ProviderType: "aws"}
	eu := Request{GlobalAccountID: "ga-1", HyperscalerType: "aws", EUAccess: true}
	shared := Request{HyperscalerType: "aws", ProviderType: "aws"}
	fit := map[string]string{"hyperscalerType": "aws", "tenantName": "ga-1"}
	with := func(base map[string]string, kv ...string) Binding {
		l := map[string]string{}
		for k, v := range base {
			l[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "<absent>" {
				delete(l, kv[i])
				continue
			}
			l[kv[i]] = kv[i+1]
		}
		return Binding{Name: "b", Labels: l, ProviderType: "aws"}
	}
	for _, c := range []struct {
		name    string
		req     Request
		b       Binding
		mention string // "" means fit
	}{
		{"the GA's own", dedicated, with(fit), ""},
		{"another tenant", dedicated, with(fit, "tenantName", "ga-2"), `tenantName is "ga-2"`},
		{"no tenant", dedicated, with(fit, "tenantName", "<absent>"), `tenantName is ""`},
		{"dirty", dedicated, with(fit, "dirty", "true"), "dirty"},
		{"dirty of any value", dedicated, with(fit, "dirty", "false"), "dirty"},
		{"another pool", dedicated, with(fit, "hyperscalerType", "aws_eu"), "hyperscalerType"},
		{"in the EU pool", dedicated, with(fit, "euAccess", "true"), "EU access"},
		{"euAccess false is in no pool", dedicated, with(fit, "euAccess", "false"), "EU access"},
		{"EU request, EU binding", eu, with(fit, "euAccess", "true"), ""},
		{"EU request, euAccess True", eu, with(fit, "euAccess", "True"), "EU access"},
		{"shared for a GA", dedicated, with(fit, "shared", "true"), "shared"},
		{"shared yes is dedicated", dedicated, with(fit, "shared", "yes"), ""},
		{"another provider", dedicated, Binding{Labels: fit, ProviderType: "gcp"}, `provider is "gcp"`},
		{"provider unknown", dedicated, Binding{Labels: fit}, ""},
		{"shared pool", shared, with(map[string]string{"hyperscalerType": "aws", "shared": "true"}), ""},
		{"shared pool, dirty is no matter", shared, with(map[string]string{"hyperscalerType": "aws", "shared": "true", "dirty": "true"}), ""},
		{"shared pool, not shared", shared, with(map[string]string{"hyperscalerType": "aws"}), "not shared"},
	} {
		got := c.req.rejects(c.b)
		if (got == "") != (c.mention == "") || !strings.Contains(got, c.mention) {
			t.Errorf("%s: rejects %q, want %q", c.name, got, c.mention)
		}
	}
}
