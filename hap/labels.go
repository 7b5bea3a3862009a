package hap

import (
	"fmt"
	"strings"
)

// BindingFromLabels turns the labels of one CredentialsBinding into a Binding.
// It refuses, with an error naming the label and its value, anything a
// decision could misread: such a binding is skipped by the run and never acted
// upon.
func BindingFromLabels(name string, labels map[string]string, providerType, resourceVersion string) (Binding, error) {
	b := Binding{
		Name:            name,
		ProviderType:    strings.ToLower(strings.TrimSpace(providerType)),
		ResourceVersion: resourceVersion,
		Labels:          labels,
	}
	if name == "" {
		return b, fmt.Errorf("binding has no name")
	}
	ht, ok := labels[LabelHyperscalerType]
	if !ok || strings.TrimSpace(ht) == "" {
		return b, fmt.Errorf("label %s is missing or empty", LabelHyperscalerType)
	}
	b.Pool.HyperscalerType = ht
	var err error
	flags := []struct {
		label string
		dst   *bool
	}{
		{LabelEUAccess, &b.Pool.EUAccess},
		{LabelShared, &b.Shared},
		{LabelDirty, &b.Dirty},
		{LabelInternal, &b.Internal},
	}
	for _, f := range flags {
		if *f.dst, err = boolLabel(labels, f.label); err != nil {
			return b, err
		}
	}
	b.GlobalAccountID = labels[LabelTenantName]
	return b, nil
}

// boolLabel reads a label KEB writes as "true". An absent label, "" and
// "false" mean false; any other value is refused rather than guessed.
func boolLabel(labels map[string]string, key string) (bool, error) {
	v, ok := labels[key]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "", "false":
		return false, nil
	}
	return false, fmt.Errorf("label %s has value %q, want \"true\" or \"false\"", key, v)
}
