package jobs_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// The default schedules are written once, in the registry. The chart's
// values and the documents that state them must say the same, for every
// job: a job added, or a default changed, fails here until they do.
func TestTheChartAndTheDocsStateTheRegistrysDefaultSchedules(t *testing.T) {
	want := jobs.DefaultSchedules()
	root := filepath.Join("..", "..")

	var values struct {
		HAPReconciler struct {
			Config struct {
				Schedules map[string]string `json:"schedules"`
			} `json:"config"`
		} `json:"hapReconciler"`
	}
	path := filepath.Join(root, "manifests", "hap-reconciler", "values.yaml")
	if err := yaml.Unmarshal(read(t, path), &values); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if got := values.HAPReconciler.Config.Schedules; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: hapReconciler.config.schedules %v, the registry's defaults %v", path, got, want)
	}

	for _, doc := range []string{"README.md", filepath.Join("docs", "configuration.md")} {
		path := filepath.Join(root, doc)
		blocks := schedulesBlocks(t, path)
		if len(blocks) == 0 {
			t.Errorf("%s states no default schedule (a yaml block with schedules:); want %v", path, want)
		}
		for _, got := range blocks {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: schedules %v, the registry's defaults %v", path, got, want)
			}
		}
	}
}

var yamlBlock = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```")

// schedulesBlocks returns the schedules of every yaml block of the
// Markdown file at path that has them.
func schedulesBlocks(t *testing.T, path string) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, m := range yamlBlock.FindAllSubmatch(read(t, path), -1) {
		var block struct {
			Schedules map[string]string `json:"schedules"`
		}
		if err := yaml.Unmarshal(m[1], &block); err != nil {
			t.Fatalf("%s: a yaml block that is not YAML: %v\n%s", path, err, m[1])
		}
		if block.Schedules != nil {
			out = append(out, block.Schedules)
		}
	}
	return out
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The README's front door describes every job, in run order, one row of
// its job table each.
func TestTheREADMEsJobTableNamesEveryJobInRunOrder(t *testing.T) {
	var named []string
	for _, m := range regexp.MustCompile(`(?m)^\| \*\*([a-z]+)\*\* \|`).FindAllSubmatch(read(t, filepath.Join("..", "..", "README.md")), -1) {
		named = append(named, string(m[1]))
	}
	if !slices.Equal(named, jobs.AllJobs) {
		t.Errorf("README.md's job table names %v, the registry %v", named, jobs.AllJobs)
	}
}
