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
// a refusal names the label it is about; and an accepted binding says
// exactly what its labels say, so a flag that is not plainly "true" or
// "false" can never make a binding look releasable.
func FuzzBindingFromLabels(f *testing.F) {
	f.Add("aws-0001", "aws", "", "ga-1", "", "", "", "aws", "17", uint8(0b000101))
	f.Add("az-eu", "azure_eu", "true", "ga 'quoted'; DROP TABLE instances;--", "false", "", "", "Azure", "1", uint8(0b011111))
	f.Add("dirty-odd", "gcp", "", "ga-2", "", "yes", "", "gcp", "2", uint8(0b010101))
	f.Add("", "aws", "", "", "", "", "", "", "", uint8(0b000001))
	f.Add("no-type", "", "", "ga", "", "", "", "aws", "3", uint8(0b000100))
	f.Add("blank-type", " \t", "TRUE ", "ga", " False", "", "", "", "4", uint8(0b001111))
	f.Add(strings.Repeat("n", 253), "openstack_eu-de-1", "", "ga", "", "", "true", "openstack", "5", uint8(0b100101))
	f.Add("unknown-provider", "hyperscaler-of-tomorrow", "", "ga", "", "", "", "\xff\xfe", "6", uint8(0b000101))
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
			if !mentionsALabelOrTheName(err.Error()) {
				t.Fatalf("error %q names neither a label nor the name", err)
			}
			if !errors.Is(err, ErrUnreadableLabels) {
				t.Fatalf("error %q is not ErrUnreadableLabels: the release re-check would fail the run on it", err)
			}
			return
		}
		if name == "" || b.Name != name {
			t.Fatalf("accepted binding named %q from name %q", b.Name, name)
		}
		if strings.TrimSpace(b.Pool.HyperscalerType) == "" || b.Pool.HyperscalerType != labels[LabelHyperscalerType] {
			t.Fatalf("hyperscaler type %q from label %q", b.Pool.HyperscalerType, labels[LabelHyperscalerType])
		}
		if b.GlobalAccountID != labels[LabelTenantName] {
			t.Fatalf("global account %q from tenantName %q", b.GlobalAccountID, labels[LabelTenantName])
		}
		for key, got := range map[string]bool{LabelEUAccess: b.Pool.EUAccess, LabelShared: b.Shared, LabelDirty: b.Dirty, LabelInternal: b.Internal} {
			if want := strings.EqualFold(strings.TrimSpace(labels[key]), "true"); got != want {
				t.Fatalf("flag %s = %v from value %q", key, got, labels[key])
			}
		}
		// A binding is only ever releasable when every guard label plainly
		// says "not": the first thing a wrong release would need.
		if Releasable(b) {
			for _, key := range []string{LabelShared, LabelDirty, LabelInternal} {
				if v := strings.ToLower(strings.TrimSpace(labels[key])); v != "" && v != "false" {
					t.Fatalf("releasable although %s=%q", key, labels[key])
				}
			}
		}
		p := Policy{AllowAll: true, DefaultLimit: 3, ProviderLimits: map[string]int{"aws": 180, "gcp": 135}}
		if l := p.LimitFor(b); l != 3 && l != 180 && l != 135 {
			t.Fatalf("limit %d is neither an override nor the default", l)
		}
	})
}

func mentionsALabelOrTheName(msg string) bool {
	if strings.Contains(msg, "name") {
		return true
	}
	for _, key := range labelKeys {
		if strings.Contains(msg, key) {
			return true
		}
	}
	return false
}

// FuzzProviderNames: folding provider spellings and reading the provider off
// a hyperscalerType never panic, are stable (folding twice changes nothing,
// so a limit written under any spelling is found under any other), and a
// limit always comes from the configuration.
func FuzzProviderNames(f *testing.F) {
	for _, s := range []string{"aws", "AWS", " Azure ", "sap-converged-cloud", "SapConvergedCloud", "aws_cf-eu11",
		"openstack_eu-de-1", "", "_", "__", "GCP_", "alibaba", "\xff", "İ", "K", "unknown_provider_x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := CanonicalProvider(s)
		if again := CanonicalProvider(c); again != c {
			t.Fatalf("CanonicalProvider(%q) = %q, but folding that again gives %q", s, c, again)
		}
		if c != strings.TrimSpace(c) {
			t.Fatalf("CanonicalProvider(%q) = %q keeps surrounding space", s, c)
		}
		provider := ProviderOfHyperscalerType(s)
		if strings.Contains(provider, "_") || !strings.HasPrefix(s, provider) {
			t.Fatalf("ProviderOfHyperscalerType(%q) = %q is not the part before the first _", s, provider)
		}
		p := Policy{DefaultLimit: 7, ProviderLimits: map[string]int{c: 11}}
		b := Binding{Pool: Pool{HyperscalerType: s}}
		if l := p.LimitFor(b); l != 7 && l != 11 {
			t.Fatalf("limit %d for hyperscaler type %q is neither the override nor the default", l, s)
		}
		b = Binding{ProviderType: s, Pool: Pool{HyperscalerType: "zzz"}}
		if c != "" {
			if l := p.LimitFor(b); l != 11 {
				t.Fatalf("provider type %q: limit %d, want the override 11 written under %q", s, l, c)
			}
		}
	})
}
