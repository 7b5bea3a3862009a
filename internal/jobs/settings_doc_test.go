package jobs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// docs/configuration.md shows a file that sets every key. A job's settings
// are written once, in its declaration: the file must show every key of
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
	for _, j := range Registry {
		if j.Section == "" {
			continue
		}
		section, _ := every[j.Section].(map[string]any)
		var documented []string
		for key := range section {
			documented = append(documented, key)
		}
		slices.Sort(documented)
		if want := j.kind().keys(); !slices.Equal(documented, want) {
			t.Errorf("%s, section %s: keys %v, the job reads %v", path, j.Section, documented, want)
		}
	}
}
