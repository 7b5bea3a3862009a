package wire

import (
	"reflect"
	"strings"
	"testing"
)

// A page is decoded as it streams in, whatever order its members come in:
// a custom resource's list puts its metadata after the items, Gardener's
// own API server before them.
func TestDecodePageReadsMembersInAnyOrder(t *testing.T) {
	item := `{"metadata":{"name":"c-1","labels":{"kyma-project.io/runtime-id":"rt-1"}},"spec":{"credentialsBindingName":"aws-1","provider":{"workers":[{"name":"w"}]}}}`
	pages := map[string]string{
		"metadata last":  `{"apiVersion":"core.gardener.cloud/v1beta1","items":[` + item + `],"kind":"ShootList","metadata":{"continue":"tok","resourceVersion":"7"}}`,
		"metadata first": `{"kind":"ShootList","apiVersion":"core.gardener.cloud/v1beta1","metadata":{"resourceVersion":"7","continue":"tok"},"items":[` + item + `]}`,
	}
	for name, body := range pages {
		var p Page[ShootItem]
		if err := decodePage(newScanner(strings.NewReader(body)), &p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Metadata.Continue != "tok" || p.Metadata.ResourceVersion != "7" || len(p.Items) != 1 {
			t.Fatalf("%s: decoded %+v", name, p)
		}
		if got := p.Items[0].Shoot(); got.Name != "c-1" || got.BindingName != "aws-1" || got.RuntimeID != "rt-1" {
			t.Fatalf("%s: shoot %+v", name, got)
		}
	}

	var empty Page[ShootItem]
	if err := decodePage(newScanner(strings.NewReader(`{"items":null,"metadata":{"resourceVersion":"8"}}`)), &empty); err != nil || len(empty.Items) != 0 {
		t.Fatalf("page without items: %+v, %v", empty, err)
	}
}

func TestDecodePageRefusesWhatIsNotAList(t *testing.T) {
	for name, body := range map[string]string{
		"truncated":       `{"items":[{"metadata":{"name":"c-1"}},`,
		"items no array":  `{"items":{"metadata":{"name":"c-1"}}}`,
		"not an object":   `[{"metadata":{"name":"c-1"}}]`,
		"item no object":  `{"items":[42]}`,
		"trailing member": `{"items":[],"metadata":`,
	} {
		var p Page[ShootItem]
		if err := decodePage(newScanner(strings.NewReader(body)), &p); err == nil {
			t.Errorf("%s: decoded %+v without an error", name, p)
		}
	}
	var p Page[ShootItem]
	if err := decodePage(newScanner(strings.NewReader(`{"items":[]}`)), &p); err != nil || !reflect.DeepEqual(p, Page[ShootItem]{}) {
		t.Errorf("empty list: %+v, %v", p, err)
	}
}

// Of a shoot's labels only the runtime ID is kept; the labels member may be
// missing or null, and a runtime ID that is not a string is an error, not an
// empty ID.
func TestShootItemKeepsOnlyTheRuntimeIDLabel(t *testing.T) {
	for labels, want := range map[string]string{
		`{"a":"1","kyma-project.io/runtime-id":"rt-1","z":{"nested":[1,2]}}`:         "rt-1",
		`{"kyma-project.io/runtime-id":"rt-2"}`:                                      "rt-2",
		`{"kyma-project.io/runtime-idx":"rt-3","Kyma-Project.io/runtime-id":"rt-4"}`: "",
		`{}`:   "",
		`null`: "",
	} {
		var item ShootItem
		if err := decodeJSON([]byte(`{"metadata":{"name":"c-1","labels":`+labels+`},"spec":{"credentialsBindingName":"aws-1"}}`), &item); err != nil {
			t.Fatalf("labels %s: %v", labels, err)
		}
		if got := item.Shoot(); got.RuntimeID != want || got.Name != "c-1" || got.BindingName != "aws-1" {
			t.Errorf("labels %s: decoded %+v, want runtime ID %q", labels, got, want)
		}
	}
	for _, labels := range []string{`{"kyma-project.io/runtime-id":7}`, `["kyma-project.io/runtime-id"]`, `"rt-1"`} {
		var item ShootItem
		if err := decodeJSON([]byte(`{"metadata":{"name":"c-1","labels":`+labels+`}}`), &item); err == nil {
			t.Errorf("labels %s: decoded %+v without an error", labels, item)
		}
	}
}
