package wire

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Gardener's objects are decoded by scanner (scan.go), which reads the
// members below and skips the rest; each kind's members are named once, in
// its decode method, for lists, watch events, single reads and export files
// alike. Protobuf answers are read by each kind's decodeProtobuf
// (protobuf_items.go), which fills the same item from the same fields, so
// Shoot() and Binding() alone decide what an item means.

// Item is an object a scanner fills from JSON, or decodeProtobuf from its
// protobuf message (protobuf_items.go), reading the same members: ShootItem
// and BindingItem. Its methods are the package's own, so only they are
// items; callers name it to read pages and objects of either kind
// (ReadPage, DecodeObject).
type Item[T any] interface {
	*T
	decode(s *scanner) error
	decodeProtobuf(msg []byte, in *interner) error
}

// decodeJSON decodes one whole object of Gardener's from raw JSON.
func decodeJSON[T any, PT Item[T]](raw []byte, v PT) error {
	s := newScanner(bytes.NewReader(raw))
	if err := v.decode(s); err != nil {
		return err
	}
	return s.finish()
}

// DecodeObject decodes one whole object of Gardener's from raw, encoded
// in format: protobuf in its envelope, or JSON.
func DecodeObject[T any, PT Item[T]](format Format, raw []byte, v PT) error {
	if format == JSON {
		return decodeJSON[T, PT](raw, v)
	}
	msg, err := unwrapEnvelope(raw)
	if err != nil {
		return err
	}
	return v.decodeProtobuf(msg, &interner{})
}

// objectMeta is the part of an object's metadata every kind's decisions
// read.
type objectMeta struct {
	Name            string
	ResourceVersion string
}

// metadata reads an object's metadata into m, handing each label to label
// and any other member to other (nil skips them).
func (s *scanner) metadata(m *objectMeta, label func(key []byte) error, other func(name []byte) error) error {
	return s.object("metadata", func(name []byte) error {
		switch string(name) {
		case "name":
			return s.strOrNull("metadata.name", &m.Name)
		case "resourceVersion":
			return s.strOrNull("metadata.resourceVersion", &m.ResourceVersion)
		case "labels":
			return s.object("metadata.labels", label)
		}
		if other != nil {
			return other(name)
		}
		return s.skip()
	})
}

// ShootItem is the part of a Shoot decisions read. A production shoot is
// about 17 KB of JSON; decoding it into Gardener's full type would cost more
// than fetching it.
type ShootItem struct {
	Metadata struct {
		objectMeta
		// DeletionTimestamp is empty while the shoot is not being deleted.
		DeletionTimestamp string
		// RuntimeID is the one label of a shoot decisions read.
		RuntimeID string
	}
	Spec struct {
		CredentialsBindingName string
		SecretBindingName      string
	}
}

func (it *ShootItem) decode(s *scanner) error {
	m, spec := &it.Metadata, &it.Spec
	return s.object("shoot", func(name []byte) error {
		switch string(name) {
		case "metadata":
			return s.metadata(&m.objectMeta, func(key []byte) error {
				if string(key) == hap.LabelRuntimeID {
					return s.strOrNull("metadata.labels."+hap.LabelRuntimeID, &m.RuntimeID)
				}
				return s.skip()
			}, func(name []byte) error {
				if string(name) == "deletionTimestamp" {
					return s.strOrNull("metadata.deletionTimestamp", &m.DeletionTimestamp)
				}
				return s.skip()
			})
		case "spec":
			return s.object("spec", func(name []byte) error {
				switch string(name) {
				case "credentialsBindingName":
					return s.strOrNull("spec.credentialsBindingName", &spec.CredentialsBindingName)
				case "secretBindingName":
					return s.strOrNull("spec.secretBindingName", &spec.SecretBindingName)
				}
				return s.skip()
			})
		}
		return s.skip()
	})
}

// Shoot is what the item means to a decision.
func (it ShootItem) Shoot() hap.Shoot {
	binding, viaSecret := it.Spec.CredentialsBindingName, false
	if binding == "" {
		// Shoots created before credentials bindings name a secret binding
		// of the same name instead.
		binding, viaSecret = it.Spec.SecretBindingName, it.Spec.SecretBindingName != ""
	}
	return hap.Shoot{
		Name:             it.Metadata.Name,
		BindingName:      binding,
		ViaSecretBinding: viaSecret,
		Deleting:         it.Metadata.DeletionTimestamp != "",
		RuntimeID:        it.Metadata.RuntimeID,
	}
}

// The kinds the items are read from, each at the version whose fields
// they read (protobuf.go names the .proto files).
const (
	ShootKind              = "Shoot"
	CredentialsBindingKind = "CredentialsBinding"
)

var (
	ShootsGroupVersion   = schema.GroupVersion{Group: "core.gardener.cloud", Version: "v1beta1"}
	BindingsGroupVersion = schema.GroupVersion{Group: "security.gardener.cloud", Version: "v1alpha1"}
)

// BindingItem is the part of a CredentialsBinding decisions read.
type BindingItem struct {
	Metadata struct {
		objectMeta
		Labels map[string]string
		// ReleaseID is the one annotation decisions read.
		ReleaseID string
	}
	Provider struct {
		Type string
	}
}

func (it *BindingItem) decode(s *scanner) error {
	m := &it.Metadata
	return s.object("credentials binding", func(name []byte) error {
		switch string(name) {
		case "metadata":
			return s.metadata(&m.objectMeta, func(key []byte) error {
				k := s.intern(key)
				raw, err := s.rawStringOrNull("metadata.labels", "a string")
				if err != nil {
					return fmt.Errorf("label %s: %w", k, err)
				}
				if m.Labels == nil {
					m.Labels = make(map[string]string)
				}
				m.Labels[k] = s.intern(raw)
				return nil
			}, func(name []byte) error {
				if string(name) != "annotations" {
					return s.skip()
				}
				return s.object("metadata.annotations", func(key []byte) error {
					if string(key) == hap.AnnotationRelease {
						return s.strOrNull("metadata.annotations."+hap.AnnotationRelease, &m.ReleaseID)
					}
					return s.skip()
				})
			})
		case "provider":
			return s.object("provider", func(name []byte) error {
				if string(name) == "type" {
					return s.strOrNull("provider.type", &it.Provider.Type)
				}
				return s.skip()
			})
		}
		return s.skip()
	})
}

// Binding is what the item means to a decision, or why a decision could
// misread its labels.
func (it BindingItem) Binding() (hap.Binding, error) {
	hb, err := hap.BindingFromLabels(it.Metadata.Name, it.Metadata.Labels, it.Provider.Type, it.Metadata.ResourceVersion)
	hb.ReleaseID = it.Metadata.ReleaseID
	return hb, err
}

// Deliver hands the binding to fn or, when a decision could misread its
// labels, the reason to skipped: every source of bindings skips alike.
func (it BindingItem) Deliver(fn func(hap.Binding) error, skipped func(hap.Skipped)) error {
	hb, err := it.Binding()
	if err != nil {
		skipped(hap.Skipped{Kind: CredentialsBindingKind, Name: it.Metadata.Name, Reason: err.Error()})
		return nil
	}
	return fn(hb)
}
