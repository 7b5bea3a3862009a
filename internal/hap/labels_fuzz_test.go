package hap

import (
	"errors"
	"strings"
	"testing"
)

// labelKeys are the labels BindingFromLabels reads, in the order the fuzz
// target's presence bits refer to them.
var labelKeys = []string{LabelHyperscalerType, LabelEUAccess, LabelTenantName, LabelShared, LabelDirty, LabelInternal}

// FuzzBindingFromLabels: whatever the labels, reading them never panics;
// only a nameless object is refused; an accepted binding is in exactly the
// pools KEB's label selectors (internal/subscriptions/label_selector.go) put
// it in, stated here on the selectors' own terms; and nothing KEB would not
// read as one of a GA's bindings is ever releasable.
func FuzzBindingFromLabels(f *testing.F) {
	f.Add("aws-0001", "aws", "", "ga-1", "", "", "", "aws", "17", uint8(0b000101))
	f.Add("az-eu", "azure_eu", "true", "ga 'quoted'; DROP TABLE instances;--", "false", "", "", "Azure", "1", uint8(0b011111))
	f.Add("dirty-odd", "gcp", "", "ga-2", "", "yes", "", "gcp", "2", uint8(0b010101))
	f.Add("", "aws", "", "", "", "", "", "", "", uint8(0b000001))
	f.Add("no-type", "", "", "ga", "", "", "", "aws", "3", uint8(0b000100))
	f.Add("blank-type", " \t", "TRUE ", "ga", " False", "", "", "", "4", uint8(0b001111))
	f.Add(strings.Repeat("n", 253), "openstack_eu-de-1", "", "ga", "", "", "true", "openstack", "5", uint8(0b100101))
	f.Add("unknown-provider", "hyperscaler-of-tomorrow", "", "ga", "", "", "", "\xff\xfe", "6", uint8(0b000101))
	f.Add("shared-dirty", "azure", "", "", "true", "true", "", "azure", "7", uint8(0b011001))
	f.Add("empty-tenant", "aws", "", "", "", "", "", "aws", "8", uint8(0b000101))
	f.Fuzz(func(t *testing.T, name, ht, eu, tenant, shared, dirty, internal, providerType, rv string, present uint8) {
		values := []string{ht, eu, tenant, shared, dirty, internal}
		labels := map[string]string{}
		for i, key := range labelKeys {
			if present&(1<<i) != 0 {
				labels[key] = values[i]
			}
		}
		b, err := BindingFromLabels(name, labels, providerType, rv)
		if err != nil {
			if name != "" || !errors.Is(err, ErrUnreadableLabels) {
				t.Fatalf("refused %q with %v: only a nameless object may be refused, as ErrUnreadableLabels", name, err)
			}
			return
		}
		if b.Name != name || b.Pool.HyperscalerType != labels[LabelHyperscalerType] || b.GlobalAccountID != labels[LabelTenantName] {
			t.Fatalf("binding %+v does not say what labels %v say", b, labels)
		}
		want := kebSelects(labels)
		if got := [3]bool{b.InSharedPool(), b.Dedicated() && b.Claimed(), b.Free()}; got != want {
			t.Fatalf("labels %v: shared/tenant/claim selectors = %v, KEB's = %v", labels, got, want)
		}
		_, dirtyLabel := labels[LabelDirty]
		if b.OutOfPool == "" && !want[0] && !want[1] && !want[2] && (!dirtyLabel || labels[LabelDirty] != "true") {
			t.Fatalf("labels %v: in no pool of KEB's, but nothing says why", labels)
		}
		if b.OutOfPool != "" && (want[0] || want[1] || want[2]) {
			t.Fatalf("labels %v: in a pool of KEB's, but OutOfPool says %q", labels, b.OutOfPool)
		}
		if Releasable(b) {
			_, isInternal := labels[LabelInternal]
			_, sharedLabel := labels[LabelShared]
			if !want[1] || isInternal || sharedLabel {
				t.Fatalf("labels %v: releasable, but KEB's tenant selector does not return it, or it carries internal or shared", labels)
			}
		}
		p := Policy{AllowAll: true, DefaultLimit: 3, ProviderLimits: map[string]int{"aws": 180, "gcp": 135}}
		if l := p.LimitFor(b); l != 3 && l != 180 && l != 135 {
			t.Fatalf("limit %d is neither an override nor the default", l)
		}
	})
}

// kebSelects says which of KEB's selectors return a binding with these
// labels: shared (hyperscalerType=X, euAccess=true|!euAccess, shared=true),
// tenant matching (..., shared!=true, !dirty, tenantName=GA) for the GA in
// tenantName, and claim (..., shared!=true, !dirty, !tenantName), for the X
// in the hyperscalerType label.
func kebSelects(labels map[string]string) [3]bool {
	has := func(k string) bool { _, ok := labels[k]; return ok }
	pool := labels[LabelHyperscalerType] != "" && (labels[LabelEUAccess] == "true" || !has(LabelEUAccess))
	dedicated := pool && labels[LabelShared] != "true" && !has(LabelDirty)
	return [3]bool{
		pool && labels[LabelShared] == "true",
		dedicated && labels[LabelTenantName] != "",
		dedicated && !has(LabelTenantName),
	}
}

// FuzzProviderNames: reading the provider off a hyperscalerType never
// panics, and a limit is always KEB's LimitForProvider of the configuration:
// the provider's own, or the default, or NoLimit.
func FuzzProviderNames(f *testing.F) {
	for _, s := range []string{"aws", "AWS", " Azure ", "sap-converged-cloud", "SapConvergedCloud", "aws_cf-eu11",
		"openstack_eu-de-1", "", "_", "__", "GCP_", "alibaba", "\xff", "İ", "K", "unknown_provider_x", "gdch"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		provider := providerOfHyperscalerType(s)
		if strings.Contains(provider, "_") || !strings.HasPrefix(s, provider) {
			t.Fatalf("providerOfHyperscalerType(%q) = %q is not the part before the first _", s, provider)
		}
		p := Policy{DefaultLimit: 7, ProviderLimits: map[string]int{"aws": 11, "gcp": 12, "azure": 13, "openstack": 14, "alicloud": 15}}
		l := p.LimitFor(Binding{Pool: Pool{HyperscalerType: s}})
		if name := KEBProvider(provider); (name == "" && l != 7) || (name != "" && l != p.ProviderLimits[name]) {
			t.Fatalf("hyperscaler type %q: limit %d", s, l)
		}
		if l := (Policy{}).LimitFor(Binding{ProviderType: s}); l != NoLimit {
			t.Fatalf("provider %q without any limit configured: limit %d, want NoLimit", s, l)
		}
	})
}
