package jobs

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// docs/configuration.md shows a file that sets every key. A job's settings
// are written once, in the struct beside the job: the file must show every key of
// every job's section, and no key the job does not read, so a job added
// with settings fails here until an operator can read them.
func TestTheConfigurationDocShowsEveryKeyOfEveryJobsSection(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var every map[string]any
	for _, m := range regexp.MustCompile("(?ms)^```yaml\n(.*?)^```").FindAllSubmatch(text, -1) {
		var block map[string]any
		if yaml.Unmarshal(m[1], &block) == nil && block["schedules"] != nil && block["namespace"] != nil {
			every = block
		}
	}
	if every == nil {
		t.Fatalf("%s has no yaml block setting every key (one with namespace and schedules)", path)
	}
	js, err := json.Marshal(NewSetup())
	if err != nil {
		t.Fatal(err)
	}
	var sections map[string]any
	if err := json.Unmarshal(js, &sections); err != nil {
		t.Fatal(err)
	}
	for name, keys := range sections {
		if name == schedulesSection || name == "retention" {
			continue // schedules.* are the jobs' names; retention is the run's
		}
		want := slices.Sorted(maps.Keys(keys.(map[string]any)))
		section, _ := every[name].(map[string]any)
		if documented := slices.Sorted(maps.Keys(section)); !slices.Equal(documented, want) {
			t.Errorf("%s, section %s: keys %v, the job reads %v", path, name, documented, want)
		}
	}
}
