package wire

import (
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// The protobuf twins of the decode methods in items.go: they fill the same
// items from the same fields, so Shoot() and Binding() decide what an item
// means whichever encoding it came in. Field numbers are in protobuf.go.

// decodeProtobuf reads a Shoot message (core/v1beta1 generated.proto).
func (it *ShootItem) decodeProtobuf(msg []byte, _ *interner) error {
	m, spec := &it.Metadata, &it.Spec
	return eachField("shoot", msg, func(f protoField) error {
		switch f.num {
		case shootMetadata:
			meta, err := f.lengthDelimited("shoot metadata")
			if err != nil {
				return err
			}
			return protoMetadata(meta, &m.objectMeta, func(key, value []byte) {
				if string(key) == hap.LabelRuntimeID {
					m.RuntimeID = string(value)
				}
			}, func(f protoField) error {
				if f.num == objectMetaDeletionTimestamp {
					return f.setTime("metadata.deletionTimestamp", &m.DeletionTimestamp)
				}
				return nil
			})
		case shootSpec:
			specMsg, err := f.lengthDelimited("shoot spec")
			if err != nil {
				return err
			}
			return eachField("spec", specMsg, func(f protoField) error {
				switch f.num {
				case shootSpecCredentialsBindingName:
					return f.setString("spec.credentialsBindingName", &spec.CredentialsBindingName)
				case shootSpecSecretBindingName:
					return f.setString("spec.secretBindingName", &spec.SecretBindingName)
				}
				return nil
			})
		}
		return nil
	})
}

// decodeProtobuf reads a CredentialsBinding message (security/v1alpha1
// generated.proto), interning label keys and values as the JSON path does.
func (it *BindingItem) decodeProtobuf(msg []byte, in *interner) error {
	m := &it.Metadata
	return eachField("credentials binding", msg, func(f protoField) error {
		switch f.num {
		case bindingMetadata:
			meta, err := f.lengthDelimited("credentials binding metadata")
			if err != nil {
				return err
			}
			return protoMetadata(meta, &m.objectMeta, func(key, value []byte) {
				if m.Labels == nil {
					m.Labels = make(map[string]string)
				}
				m.Labels[in.intern(key)] = in.intern(value)
			}, func(f protoField) error {
				if f.num != objectMetaAnnotations {
					return nil
				}
				return f.mapEntry("metadata.annotations", func(key, value []byte) {
					if string(key) == hap.AnnotationRelease {
						m.ReleaseID = string(value)
					}
				})
			})
		case bindingProvider:
			provider, err := f.lengthDelimited("provider")
			if err != nil {
				return err
			}
			return eachField("provider", provider, func(f protoField) error {
				if f.num == bindingProviderType {
					return f.setString("provider.type", &it.Provider.Type)
				}
				return nil
			})
		}
		return nil
	})
}
