package landscape

import (
	"encoding/json"
	"slices"

	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
)

// encodeBinding is the create request's body for b in namespace: the
// referenced secret lives in the project namespace, which the generator
// cannot know. b itself is left as generated.
func encodeBinding(b *securityv1alpha1.CredentialsBinding, namespace string) ([]byte, error) {
	loaded := *b
	loaded.CredentialsRef.Namespace = namespace
	return json.Marshal(&loaded)
}

// encodeShoot is the create request's body for s: a shoot to be loaded as
// being deleted carries Gardener's finalizer, so that deleting it leaves it
// in place with a deletionTimestamp. s itself is left as generated.
func encodeShoot(s *Shoot) ([]byte, error) {
	if !s.Deleting {
		return json.Marshal(s.Object)
	}
	loaded := *s.Object
	loaded.Finalizers = append(slices.Clip(loaded.Finalizers), gardenerFinalizer)
	return json.Marshal(&loaded)
}
