package gardener

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/kyma-project/hap-reconciler/hap"
)

// Gardener's objects are decoded with encoding/json/v2 (the module that
// mirrors it until Go ships it as stable): it matches member names exactly,
// as the API server does, and skips the members a decision does not read
// about four times faster than encoding/json, which at 100,000 shoots is
// the client's largest cost.

// unmarshal decodes one object of Gardener's.
func unmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// shootItem is the part of a Shoot decisions read. A production shoot is
// about 17 KB of JSON; decoding it into Gardener's full type would cost more
// than fetching it.
type shootItem struct {
	Metadata struct {
		Name              string         `json:"name"`
		DeletionTimestamp *string        `json:"deletionTimestamp"`
		Labels            runtimeIDLabel `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		CredentialsBindingName string `json:"credentialsBindingName"`
		SecretBindingName      string `json:"secretBindingName"`
	} `json:"spec"`
}

// runtimeIDLabel is the one label of a shoot decisions read. Decoding the
// labels into a map would allocate one per shoot only to read one key.
type runtimeIDLabel string

// UnmarshalJSONFrom keeps the runtime ID label of a labels object and skips
// the others.
func (l *runtimeIDLabel) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		return nil
	case '{':
	default:
		return fmt.Errorf("labels is a JSON %v, want an object", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		key, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if key.String() != hap.LabelRuntimeID {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		var value string
		if err := json.UnmarshalDecode(dec, &value); err != nil {
			return fmt.Errorf("label %s: %w", hap.LabelRuntimeID, err)
		}
		*l = runtimeIDLabel(value)
	}
	_, err = dec.ReadToken() // the closing brace
	return err
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
		RuntimeID:        string(s.Metadata.Labels),
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
