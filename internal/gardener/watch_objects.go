package gardener

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// The watch caches hold these small objects instead of Gardener's: what a
// decision reads plus the name and resourceVersion a reflector needs. A
// production shoot is about 17 KB of JSON; its cached form is a few hundred
// bytes, so tens of thousands of shoots stay within a few megabytes.

// cachedShoot is a shoot as the watch cache keeps it.
type cachedShoot struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	shoot hap.Shoot
}

func newCachedShoot(item wire.ShootItem, resourceVersion string) *cachedShoot {
	return &cachedShoot{
		ObjectMeta: metav1.ObjectMeta{Name: item.Metadata.Name, ResourceVersion: resourceVersion},
		shoot:      item.Shoot(),
	}
}

func (s *cachedShoot) DeepCopyObject() runtime.Object {
	c := *s
	return &c
}

// cachedBinding is a binding as the watch cache keeps it: the decoded
// binding, or the reason a list must skip it.
type cachedBinding struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	binding hap.Binding
	skipped string
}

func newCachedBinding(item wire.BindingItem) *cachedBinding {
	c := &cachedBinding{ObjectMeta: metav1.ObjectMeta{Name: item.Metadata.Name, ResourceVersion: item.Metadata.ResourceVersion}}
	b, err := item.Binding()
	if err != nil {
		c.skipped = err.Error()
	} else {
		c.binding = b
	}
	return c
}

func (b *cachedBinding) DeepCopyObject() runtime.Object {
	c := *b
	c.binding.Labels = slices.Clone(b.binding.Labels)
	return &c
}

// cachedList is what a watch source's list hands its reflector.
type cachedList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []runtime.Object
}

func (l *cachedList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = slices.Clone(l.Items)
	return &c
}

// decodeShootEvent decodes the object of a watch event on shoots.
func decodeShootEvent(format wire.Format, raw []byte) (runtime.Object, error) {
	var item wire.ShootItem
	if err := wire.DecodeObject(format, raw, &item); err != nil {
		return nil, fmt.Errorf("decode shoot: %w", err)
	}
	// The reflector resumes watching from the last event's resourceVersion.
	return newCachedShoot(item, item.Metadata.ResourceVersion), nil
}

// decodeBindingEvent decodes the object of a watch event on credentials
// bindings.
func decodeBindingEvent(format wire.Format, raw []byte) (runtime.Object, error) {
	var item wire.BindingItem
	if err := wire.DecodeObject(format, raw, &item); err != nil {
		return nil, fmt.Errorf("decode credentials binding: %w", err)
	}
	return newCachedBinding(item), nil
}
