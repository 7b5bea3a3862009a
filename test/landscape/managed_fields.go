package landscape

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	smdtyped "sigs.k8s.io/structured-merge-diff/v4/typed"
)

// Who wrote a seeded shoot, as production's managedFields name them: KEB
// creates and updates the spec, the gardenlet writes the status.
const (
	specManager   = "kyma-environment-broker"
	statusManager = "gardenlet"
)

// managedFields is what the API server would have recorded for a shoot KEB
// created and the gardenlet reported on: one entry per writer, each with
// the fields it set. Production shoots carry them, a few KB each, and every
// list serves them, so a seeded shoot is as large as a created one. The
// field sets are deduced from the object itself (lists atomic), which is
// close in size to what the server's schema makes of them.
func managedFields(obj any, at metav1.Time, apiVersion string) ([]metav1.ManagedFieldsEntry, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	status := content["status"]
	delete(content, "status")
	delete(content, "apiVersion")
	delete(content, "kind")
	if meta, ok := content["metadata"].(map[string]any); ok {
		content["metadata"] = map[string]any{"labels": meta["labels"], "annotations": meta["annotations"], "finalizers": meta["finalizers"]}
	}
	spec, err := fieldsOf(content)
	if err != nil {
		return nil, fmt.Errorf("managed fields of the spec: %w", err)
	}
	entries := []metav1.ManagedFieldsEntry{{Manager: specManager, Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: apiVersion, Time: &at, FieldsType: "FieldsV1", FieldsV1: spec}}
	if status != nil {
		fields, err := fieldsOf(map[string]any{"status": status})
		if err != nil {
			return nil, fmt.Errorf("managed fields of the status: %w", err)
		}
		entries = append(entries, metav1.ManagedFieldsEntry{Manager: statusManager, Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: apiVersion, Time: &at, FieldsType: "FieldsV1", FieldsV1: fields, Subresource: "status"})
	}
	return entries, nil
}

// fieldsOf is the field set of content in the FieldsV1 form.
func fieldsOf(content map[string]any) (*metav1.FieldsV1, error) {
	value, err := smdtyped.DeducedParseableType.FromUnstructured(content)
	if err != nil {
		return nil, err
	}
	set, err := value.ToFieldSet()
	if err != nil {
		return nil, err
	}
	raw, err := set.ToJSON()
	if err != nil {
		return nil, err
	}
	return &metav1.FieldsV1{Raw: raw}, nil
}
