package gardener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// listBindings hands every CredentialsBinding of the namespace to fn, page by
// page. A binding whose labels a decision could misread goes to skipped with
// the reason instead, and the list goes on.
//
// onReset works as for listShoots and covers both fn and skipped.
func (c *Client) listBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) (ListStats, error) {
	if onReset == nil || fn == nil || skipped == nil {
		return ListStats{}, errors.New("list credentials bindings: onReset, fn and skipped must not be nil")
	}
	return listPaged(ctx, c, c.bindings, onReset, func(item wire.BindingItem) error {
		return item.Deliver(fn, skipped)
	})
}

// getBinding reads one binding (see GetBinding).
func (c *Client) getBinding(ctx context.Context, name string) (hap.Binding, error) {
	if name == "" {
		return hap.Binding{}, errors.New("get credentials binding: name is empty")
	}
	var body []byte
	var contentType string
	err := c.readWithRetry(ctx, func(ctx context.Context) (err error) {
		body, err = c.bindings.client.Get().Namespace(c.namespace).Resource(c.bindings.name).Name(name).Do(ctx).
			ContentType(&contentType).Raw()
		return err
	})
	if err != nil {
		return hap.Binding{}, fmt.Errorf("get credentials binding %q in namespace %s: %w", name, c.namespace, err)
	}
	format, err := wire.FormatOf(contentType)
	if err != nil {
		return hap.Binding{}, fmt.Errorf("get credentials binding %q: %w", name, err)
	}
	var item wire.BindingItem
	if err := wire.DecodeObject(format, body, &item); err != nil {
		return hap.Binding{}, fmt.Errorf("decode credentials binding %q: %w", name, err)
	}
	b, err := item.Binding()
	if err != nil {
		return hap.Binding{}, fmt.Errorf("credentials binding %q: %w", name, err)
	}
	return b, nil
}

// MarkReleased adds dirty: "true" and the AnnotationRelease annotation
// naming releaseID to the binding, in one write, provided the binding is
// still at resourceVersion; otherwise nothing changes and the error
// satisfies IsConflict. Every other label and annotation stays as it is.
//
// The write carries its timeout to the API server too (client-go's
// timeout parameter), so the server gives up on it within the same bound
// instead of applying it at some later moment the job cannot know of.
func (c *Client) MarkReleased(ctx context.Context, name, resourceVersion, releaseID string) error {
	if name == "" || releaseID == "" {
		return fmt.Errorf("mark credentials binding %q released: the name and the release must be given", name)
	}
	if resourceVersion == "" {
		return fmt.Errorf("mark credentials binding %q released: resourceVersion is empty, refusing an unguarded write", name)
	}
	return c.guardedPatch(ctx, name, resourceVersion, fmt.Sprintf("mark credentials binding %q released", name), map[string]any{
		metadataLabels:      map[string]string{hap.LabelDirty: "true"},
		metadataAnnotations: map[string]string{hap.AnnotationRelease: releaseID},
	})
}

// VoidRelease marks the binding with the AnnotationReleaseVoided annotation
// naming releaseID, provided it is still at resourceVersion (the version the
// release's own update is guarded by); otherwise nothing changes and the
// error satisfies IsConflict. Once it lands, that update can never land.
func (c *Client) VoidRelease(ctx context.Context, name, resourceVersion, releaseID string) error {
	if name == "" || releaseID == "" || resourceVersion == "" {
		return fmt.Errorf("void release %q of credentials binding %q: name, release and resourceVersion must be given", releaseID, name)
	}
	return c.guardedPatch(ctx, name, resourceVersion, fmt.Sprintf("void release %s of credentials binding %q", releaseID, name), map[string]any{
		metadataAnnotations: map[string]string{hap.AnnotationReleaseVoided: releaseID},
	})
}

// UndoRelease removes the dirty label a release of the job's set, and
// marks the binding with the AnnotationReleaseUndone annotation naming
// releaseID, in one write, provided the binding is still at resourceVersion;
// otherwise nothing changes and the error satisfies IsConflict. tenantName
// and every other label stay: the binding is its GA's again, as before the
// release.
func (c *Client) UndoRelease(ctx context.Context, name, resourceVersion, releaseID string) error {
	if name == "" || releaseID == "" || resourceVersion == "" {
		return fmt.Errorf("undo release %q of credentials binding %q: name, release and resourceVersion must be given", releaseID, name)
	}
	return c.guardedPatch(ctx, name, resourceVersion, fmt.Sprintf("undo release %s of credentials binding %q", releaseID, name), map[string]any{
		metadataLabels:      map[string]any{hap.LabelDirty: nil}, // null: a merge patch removes the label
		metadataAnnotations: map[string]string{hap.AnnotationReleaseUndone: releaseID},
	})
}

// The keys of a binding's metadata the job's guarded patches write.
const (
	metadataLabels      = "labels"
	metadataAnnotations = "annotations"
)

// guardedPatch merges metadata into the binding provided it is still at
// resourceVersion; otherwise nothing changes and the error satisfies
// isConflict. The write carries its timeout to the API server.
func (c *Client) guardedPatch(ctx context.Context, name, resourceVersion, what string, metadata map[string]any) error {
	metadata["resourceVersion"] = resourceVersion
	patch, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return fmt.Errorf("%s: encode the patch: %w", what, err)
	}
	// Writes stay JSON both ways: the answer is not read.
	err = c.bindings.client.Patch(types.MergePatchType).Namespace(c.namespace).Resource(c.bindings.name).Name(name).
		SetHeader("Accept", runtime.ContentTypeJSON).Timeout(c.requestTimeout).Body(patch).Do(ctx).Error()
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		return fmt.Errorf("%s at resourceVersion %s: %w: %w", what, resourceVersion, errConflict, err)
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}
