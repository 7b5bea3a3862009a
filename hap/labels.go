package hap

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnreadableLabels is what every error of BindingFromLabels is (errors.Is):
// the binding's labels could be misread, so nothing may act on it.
var ErrUnreadableLabels = errors.New("unreadable labels")

// labelError keeps the message naming the label and its value, and is
// ErrUnreadableLabels.
type labelError struct{ msg string }

func (e labelError) Error() string        { return e.msg }
func (e labelError) Is(target error) bool { return target == ErrUnreadableLabels }

func labelErrorf(format string, args ...any) error {
	return labelError{msg: fmt.Sprintf(format, args...)}
}

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
		return b, labelErrorf("binding has no name")
	}
	ht, ok := labels[LabelHyperscalerType]
	if !ok || strings.TrimSpace(ht) == "" {
		return b, labelErrorf("label %s is missing or empty", LabelHyperscalerType)
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
	return false, labelErrorf("label %s has value %q, want \"true\" or \"false\"", key, v)
}
