package exportfile

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/gardenertest"
)

// exportFixtures are the objects of a small project as kubectl exports
// them: with namespace, a legacy shoot, a deleting one and a binding whose
// labels a decision could misread.
func exportFixtures() []map[string]any {
	withNamespace := func(obj map[string]any) map[string]any {
		obj["metadata"].(map[string]any)["namespace"] = "garden-kyma"
		return obj
	}
	deleting := gardenertest.Shoot("c-deleting", nil, map[string]any{"credentialsBindingName": "aws-0001"})
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-01T00:00:00Z"
	claimed := gardenertest.Binding("aws-0001", map[string]any{hap.LabelHyperscalerType: "aws", hap.LabelTenantName: "ga-1"})
	claimed["metadata"].(map[string]any)["resourceVersion"] = "4711"
	return []map[string]any{
		withNamespace(claimed),
		withNamespace(gardenertest.Binding("aws-0002", map[string]any{hap.LabelHyperscalerType: "aws", hap.LabelDirty: "yes"})),
		withNamespace(gardenertest.Shoot("c-current", map[string]any{hap.LabelRuntimeID: "rt-1"}, map[string]any{"credentialsBindingName": "aws-0001"})),
		withNamespace(gardenertest.Shoot("c-legacy", nil, map[string]any{"secretBindingName": "aws-0003"})),
		withNamespace(deleting),
	}
}

func asList(items []map[string]any) map[string]any {
	list := make([]any, len(items))
	for i, item := range items {
		list[i] = item
	}
	// kubectl writes a List's kind after its items.
	return map[string]any{"apiVersion": "v1", "items": list, "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// exported is what one pass over a source yields.
type exported struct {
	shoots   []hap.Shoot
	bindings []hap.Binding
	skipped  []hap.Skipped
}

func listAll(t *testing.T, s *Source) exported {
	t.Helper()
	var got exported
	reset := func() { t.Fatal("an export never starts over") }
	if err := s.ListShoots(context.Background(), reset, func(sh hap.Shoot) error {
		got.shoots = append(got.shoots, sh)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.ListBindings(context.Background(), reset, func(b hap.Binding) error {
		got.bindings = append(got.bindings, b)
		return nil
	}, func(sk hap.Skipped) { got.skipped = append(got.skipped, sk) }); err != nil {
		t.Fatal(err)
	}
	sort.Slice(got.shoots, func(i, j int) bool { return got.shoots[i].Name < got.shoots[j].Name })
	sort.Slice(got.bindings, func(i, j int) bool { return got.bindings[i].Name < got.bindings[j].Name })
	return got
}

func TestSourceDecodesEveryExportShapeAlike(t *testing.T) {
	objs := exportFixtures()
	var yamlDocs []string
	for _, o := range objs[:2] {
		yamlDocs = append(yamlDocs, string(mustYAML(t, o)))
	}
	yamlDocs = append(yamlDocs, string(mustYAML(t, asList(objs[2:]))), "")
	var stream []byte
	for _, o := range objs {
		stream = append(stream, mustJSON(t, o)...)
		stream = append(stream, '\n')
	}
	shapes := map[string][]string{
		"one JSON List of mixed kinds": {writeFile(t, "all.json", mustJSON(t, asList(objs)))},
		"one YAML List":                {writeFile(t, "all.yaml", mustYAML(t, asList(objs)))},
		"YAML documents, objects and a List, with a trailing ---": {writeFile(t, "docs.yaml", []byte(strings.Join(yamlDocs, "---\n")))},
		"a stream of single JSON objects":                         {writeFile(t, "stream.json", stream)},
		"bindings and shoots in separate files": {
			writeFile(t, "bindings.json", mustJSON(t, asList(objs[:2]))),
			writeFile(t, "shoots.yaml", mustYAML(t, asList(objs[2:]))),
		},
	}
	want := exported{
		shoots: []hap.Shoot{
			{Name: "c-current", BindingName: "aws-0001", RuntimeID: "rt-1"},
			{Name: "c-deleting", BindingName: "aws-0001", Deleting: true},
			{Name: "c-legacy", BindingName: "aws-0003", ViaSecretBinding: true},
		},
		bindings: []hap.Binding{{
			Name: "aws-0001", ProviderType: "aws", ResourceVersion: "4711", GlobalAccountID: "ga-1",
			Pool:   hap.Pool{HyperscalerType: "aws"},
			Labels: hap.LabelsOf(map[string]string{hap.LabelHyperscalerType: "aws", hap.LabelTenantName: "ga-1"}),
		}, {
			// Read as KEB's selectors read it: a dirty label of any value
			// keeps it from the dedicated pools, and "yes" is no state KEB
			// or the cleanup job writes.
			Name: "aws-0002", ProviderType: "aws", Dirty: true,
			Pool:      hap.Pool{HyperscalerType: "aws"},
			OutOfPool: `label dirty has value "yes": KEB selects only bindings without a dirty label, whatever its value`,
			Labels:    hap.LabelsOf(map[string]string{hap.LabelHyperscalerType: "aws", hap.LabelDirty: "yes"}),
		}},
	}
	for shape, files := range shapes {
		t.Run(shape, func(t *testing.T) {
			s, err := Open("", files...)
			if err != nil {
				t.Fatal(err)
			}
			if got := listAll(t, s); !reflect.DeepEqual(got, want) {
				t.Errorf("listed\n got %+v\nwant %+v", got, want)
			}
			if s.Namespace() != "garden-kyma" {
				t.Errorf("namespace %q, want the export's garden-kyma", s.Namespace())
			}
		})
	}
}

func TestSourceReadsAndRefusesWritesLikeTheAPI(t *testing.T) {
	s, err := Open("garden-kyma", writeFile(t, "all.json", mustJSON(t, asList(exportFixtures()))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := s.GetBinding(ctx, "aws-0001")
	if err != nil || b.GlobalAccountID != "ga-1" || b.ResourceVersion != "4711" {
		t.Errorf("GetBinding(aws-0001) = %+v, %v", b, err)
	}
	if b, err := s.GetBinding(ctx, "aws-0002"); err != nil || !strings.Contains(b.OutOfPool, `label dirty has value "yes"`) {
		t.Errorf("GetBinding(aws-0002) = %+v, %v; want the binding, in no pool, naming the label and value", b, err)
	}
	_, err = s.GetBinding(ctx, "aws-9999")
	if !s.IsNotFound(err) || !strings.Contains(err.Error(), `"aws-9999"`) {
		t.Errorf("GetBinding of a binding the export lacks: %v, IsNotFound %v", err, s.IsNotFound(err))
	}
	err = s.MarkReleased(ctx, "aws-0001", "4711", "1")
	if err == nil || !strings.HasPrefix(err.Error(), "release is refused when reading from --gardener-file: ") || s.IsConflict(err) || !s.IsRefused(err) {
		t.Errorf("MarkReleased: %v, want a refusal", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.ListShoots(cancelled, func() {}, func(hap.Shoot) error { return nil }); err == nil {
		t.Error("a cancelled list must fail, not pass for complete")
	}
}

func TestSourceRefusesExportsItCannotReadWhole(t *testing.T) {
	objs := exportFixtures()
	otherNamespace := exportFixtures()[0]
	otherNamespace["metadata"].(map[string]any)["namespace"] = "garden-other"
	otherNamespace["metadata"].(map[string]any)["name"] = "aws-0009"
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "aws-0001"}}
	full := mustJSON(t, asList(objs))
	cases := []struct {
		name      string
		namespace string
		files     func(t *testing.T) []string
		want      []string
	}{
		{"no file", "", func(*testing.T) []string { return nil }, []string{"no export file given"}},
		{"missing file", "", func(t *testing.T) []string { return []string{filepath.Join(t.TempDir(), "gone.json")} },
			[]string{"gone.json", "no such file"}},
		{"empty file", "", func(t *testing.T) []string { return []string{writeFile(t, "empty.json", []byte("\n"))} },
			[]string{"empty.json is empty"}},
		{"cut-off JSON", "", func(t *testing.T) []string { return []string{writeFile(t, "cut.json", full[:len(full)/2])} },
			[]string{"cut.json", "not valid JSON near byte"}},
		{"another kind", "", func(t *testing.T) []string {
			return []string{writeFile(t, "mixed.json", mustJSON(t, asList(append(objs[:1:1], secret))))}
		}, []string{"mixed.json", "items[1]", `kind "Secret" (apiVersion "v1")`}},
		{"an object twice", "", func(t *testing.T) []string {
			return []string{writeFile(t, "a.json", full), writeFile(t, "b.json", mustJSON(t, objs[0]))}
		}, []string{"b.json", `CredentialsBinding "aws-0001" was already read from`, "a.json, object 1, items[0]"}},
		{"two namespaces", "", func(t *testing.T) []string {
			return []string{writeFile(t, "ns.json", mustJSON(t, asList(append(objs, otherNamespace))))}
		}, []string{"ns.json", `"aws-0009" is in namespace "garden-other"`, `is in "garden-kyma"`}},
		{"not the namespace asked for", "garden-prod", func(t *testing.T) []string { return []string{writeFile(t, "all.json", full)} },
			[]string{"all.json", `is in namespace "garden-kyma", not in "garden-prod" as asked`}},
		{"shoots without bindings", "", func(t *testing.T) []string {
			return []string{writeFile(t, "shoots.json", mustJSON(t, asList(objs[2:])))}
		}, []string{"shoots.json", "3 shoot(s) but no credentials binding"}},
		{"no name", "", func(t *testing.T) []string {
			return []string{writeFile(t, "noname.yaml", []byte("apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {}\n"))}
		}, []string{"noname.yaml", "Shoot has no metadata.name"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(c.namespace, c.files(t)...)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
