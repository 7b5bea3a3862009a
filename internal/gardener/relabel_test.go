package gardener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// jsonPatchOp is one RFC 6902 operation.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// replaceLabels replaces the binding's labels with labels, provided the
// binding is still at resourceVersion. Otherwise nothing changes and the
// error satisfies IsConflict. Tests relabel bindings with it, as KEB and
// the cleanup do; the job itself only marks releases (MarkReleased).
//
// A JSON patch is used because it replaces the label map as a whole (a merge
// patch would keep labels the caller dropped), and setting resourceVersion in
// it makes the API server refuse the write when the binding moved on.
func (c *Client) replaceLabels(ctx context.Context, name, resourceVersion string, labels map[string]string) error {
	if name == "" {
		return errors.New("update credentials binding labels: name is empty")
	}
	if resourceVersion == "" {
		return fmt.Errorf("update labels of credentials binding %q: resourceVersion is empty, refusing an unguarded write", name)
	}
	if labels == nil {
		labels = map[string]string{}
	}
	patch, err := json.Marshal([]jsonPatchOp{
		{Op: "add", Path: "/metadata/resourceVersion", Value: resourceVersion},
		{Op: "add", Path: "/metadata/labels", Value: labels},
	})
	if err != nil {
		return fmt.Errorf("encode label patch for credentials binding %q: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout)
	defer cancel()
	err = c.bindings.client.Patch(types.JSONPatchType).Namespace(c.namespace).Resource(c.bindings.name).Name(name).
		SetHeader("Accept", runtime.ContentTypeJSON).Body(patch).Do(ctx).Error()
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		return fmt.Errorf("update labels of credentials binding %q at resourceVersion %s: %w: %w", name, resourceVersion, errConflict, err)
	default:
		return fmt.Errorf("update labels of credentials binding %q: %w", name, err)
	}
}
