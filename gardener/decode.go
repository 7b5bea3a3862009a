package gardener

import "github.com/kyma-project/hap-reconciler/hap"

// shootItem is the part of a Shoot decisions read. A production shoot is
// about 17 KB of JSON; decoding it into Gardener's full type would cost more
// than fetching it.
type shootItem struct {
	Metadata struct {
		Name              string            `json:"name"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
		Labels            map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		CredentialsBindingName string `json:"credentialsBindingName"`
		SecretBindingName      string `json:"secretBindingName"`
	} `json:"spec"`
}

func (s shootItem) shoot() hap.Shoot {
	binding, viaSecret := s.Spec.CredentialsBindingName, false
	if binding == "" {
		// Shoots created before credentials bindings name a secret binding
		// of the same name instead.
		binding, viaSecret = s.Spec.SecretBindingName, s.Spec.SecretBindingName != ""
	}
	return hap.Shoot{
		Name:             s.Metadata.Name,
		BindingName:      binding,
		ViaSecretBinding: viaSecret,
		Deleting:         s.Metadata.DeletionTimestamp != nil && *s.Metadata.DeletionTimestamp != "",
		RuntimeID:        s.Metadata.Labels[hap.LabelRuntimeID],
	}
}

// bindingItem is the part of a CredentialsBinding decisions read.
type bindingItem struct {
	Metadata struct {
		Name            string            `json:"name"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
	Provider struct {
		Type string `json:"type"`
	} `json:"provider"`
}

func (b bindingItem) binding() (hap.Binding, error) {
	return hap.BindingFromLabels(b.Metadata.Name, b.Metadata.Labels, b.Provider.Type, b.Metadata.ResourceVersion)
}

// deliver hands the binding to fn or, when a decision could misread its
// labels, the reason to skipped: every source of bindings skips alike.
func (b bindingItem) deliver(fn func(hap.Binding) error, skipped func(hap.Skipped)) error {
	hb, err := b.binding()
	if err != nil {
		skipped(hap.Skipped{Kind: credentialsBindingKind, Name: b.Metadata.Name, Reason: err.Error()})
		return nil
	}
	return fn(hb)
}
