package db

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// The job never migrates past what the module of its own release reads,
// and that module reads the schema this release leaves
// (docs/deployment.md#the-skew-between-kebs-module-and-the-jobs-schema): a
// migration added without the module's range raised fails here, and so
// does a module that stopped reading this release's schema.
func TestTheNewestMigrationIsOneTheModuleOfThisReleaseReads(t *testing.T) {
	latest, err := LatestVersion()
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.ModuleReads().Check(int(latest), false); err != nil {
		t.Errorf("this release migrates to version %d: %v", latest, err)
	}
}
