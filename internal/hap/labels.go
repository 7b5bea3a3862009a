package hap

import (
	"errors"
	"fmt"
)

// ErrUnreadableLabels is what every error of BindingFromLabels is (errors.Is):
// the object cannot be a binding decisions may act on.
var ErrUnreadableLabels = errors.New("unreadable labels")

// labelError keeps the message naming the label and its value, and is
// ErrUnreadableLabels.
type labelError struct{ msg string }

func (e labelError) Error() string        { return e.msg }
func (e labelError) Is(target error) bool { return target == ErrUnreadableLabels }

func labelErrorf(format string, args ...any) error {
	return labelError{msg: fmt.Sprintf(format, args...)}
}

// The label values KEB's selectors test for (internal/subscriptions/
// label_selector.go): `label=true` is an exact, case-sensitive match, and
// `!label` means the label is absent, whatever its value.
const labelTrue = "true"

// BindingFromLabels reads the labels of one CredentialsBinding the way KEB's
// label selectors read them:
//
//	dedicated: hyperscalerType=X, euAccess=true | !euAccess, shared!=true, !dirty, tenantName=GA
//	claim:     the same with !tenantName
//	shared:    hyperscalerType=X, euAccess=true | !euAccess, shared=true
//
// So `shared: "yes"` is an ordinary dedicated binding, and `dirty: "false"`,
// `euAccess: "false"` or `euAccess: "True"` put a binding in no pool KEB
// reads: Binding.OutOfPool says which label and value did it. Only an object
// without a name is refused.
func BindingFromLabels(name string, labels map[string]string, providerType, resourceVersion string) (Binding, error) {
	b := Binding{
		Name:            name,
		ProviderType:    providerType,
		ResourceVersion: resourceVersion,
		Labels:          LabelsOf(labels),
	}
	if name == "" {
		return b, labelErrorf("binding has no name")
	}
	b.Pool.HyperscalerType = labels[LabelHyperscalerType]
	b.Pool.EUAccess = labels[LabelEUAccess] == labelTrue
	b.Shared = labels[LabelShared] == labelTrue
	b.GlobalAccountID = labels[LabelTenantName]
	_, b.Dirty = labels[LabelDirty]
	// Any value keeps a binding from release: the label's meaning is "do
	// not hand this account around", and no value is guessed to mean less.
	_, b.Internal = labels[LabelInternal]
	b.OutOfPool = outOfPool(labels, b.Shared)
	return b, nil
}

// outOfPool returns why no selector of KEB's can ever return a binding with
// these labels, naming the label and its value, or "" when one can. A
// binding marked dirty: "true" is out of the dedicated pools too, but that is
// the normal state of a released account, not a mistake, so it is not named
// here (Binding.Dirty says it).
func outOfPool(labels map[string]string, shared bool) string {
	if ht, ok := labels[LabelHyperscalerType]; !ok || ht == "" {
		return fmt.Sprintf("label %s is missing or empty: every selector of KEB's names the pool by it", LabelHyperscalerType)
	}
	if v, ok := labels[LabelEUAccess]; ok && v != labelTrue {
		return fmt.Sprintf("label %s has value %q: KEB selects %s=true or no %s label, nothing else", LabelEUAccess, v, LabelEUAccess, LabelEUAccess)
	}
	if shared {
		return "" // the shared selector reads neither dirty nor tenantName
	}
	if v, ok := labels[LabelDirty]; ok && v != labelTrue {
		return fmt.Sprintf("label %s has value %q: KEB selects only bindings without a %s label, whatever its value", LabelDirty, v, LabelDirty)
	}
	if v, ok := labels[LabelTenantName]; ok && v == "" {
		return fmt.Sprintf("label %s is present but empty: KEB neither matches it to a global account nor claims it (!%s)", LabelTenantName, LabelTenantName)
	}
	return ""
}
