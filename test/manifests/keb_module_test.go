package manifests_test

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// The chart of a release states, by default, that KEB pins the module of
// the same release: its kebModule.* is that module's range, so a default
// install never refuses its own migrations and alerts only on a real skew.
func TestTheChartPinsTheModuleOfItsOwnRelease(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		HapReconciler struct {
			Config struct {
				KEBModule struct {
					SchemaOldest int `json:"schemaOldest"`
					SchemaNewest int `json:"schemaNewest"`
				} `json:"kebModule"`
			} `json:"config"`
		} `json:"hapReconciler"`
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	got := values.HapReconciler.Config.KEBModule
	if want := schema.ModuleReads(); got.SchemaOldest != want.Oldest || got.SchemaNewest != want.Newest {
		t.Errorf("hapReconciler.config.kebModule is %d to %d; the module of this release reads %s", got.SchemaOldest, got.SchemaNewest, want)
	}
}
