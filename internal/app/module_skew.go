package app

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/db"
)

// The skew between the provisioning module KEB pins and the job's schema
// (docs/deployment.md#the-skew-between-kebs-module-and-the-jobs-schema):
// the module refuses a schema outside its range itself, at its first pick,
// every minute after and at each pick while it refuses; the job says so before KEB
// does, from kebModule.*, which states the pin.

// refusePastKEBModule stops a migrate that would take the schema past what
// KEB's pinned module reads: every pick would go to KEB's live path until
// KEB raised its pin. The running job stays on its release; raising
// kebModule.* (with KEB's pin) lets the upgrade through.
func refusePastKEBModule(pin config.KEBModule) error {
	latest, err := db.LatestVersion()
	if err != nil {
		return err
	}
	if int(latest) > pin.SchemaNewest {
		return &config.Error{Key: "kebModule.schemaNewest", Value: fmt.Sprint(pin.SchemaNewest),
			Reason: fmt.Sprintf("KEB's pinned provisioning module reads the job's schema up to version %d and this release migrates it to %d: "+
				"raise KEB's pin of the module first (its schema.Newest is %d or more), then kebModule.* with it", pin.SchemaNewest, latest, latest)}
	}
	return nil
}

// kebModuleReads reads the schema's version and says whether KEB's pinned
// module reads it: nil, or an error wrapping provisioning.ErrSchemaSkew.
// The read's own failure is err. A schema never migrated has no version
// to weigh (v.Version 0, skew nil): what reads its tables says to migrate.
func kebModuleReads(ctx context.Context, store *db.Store, pin config.KEBModule) (v db.SchemaVersion, skew, err error) {
	if v, err = store.SchemaVersion(ctx); err != nil || v.Version == 0 {
		return v, nil, err
	}
	return v, pin.Reads().Check(int(v.Version), v.Dirty), nil
}

// noteKEBModule records at start where the schema stands for KEB's pinned
// module: the metric its alert reads, and a warning while it is outside.
func noteKEBModule(ctx context.Context, env *Env, pin config.KEBModule) {
	v, skew, err := kebModuleReads(ctx, env.Store, pin)
	if err != nil || v.Version == 0 {
		return // the command's own reads say what is wrong
	}
	env.Metrics.SchemaSeen(v.Version, skew == nil)
	if skew != nil {
		env.Log.Warn("KEB's pinned provisioning module does not read the job's schema: every pick goes to KEB's live path until the schema or kebModule.* (KEB's pin) moves back within range",
			zap.Error(skew))
	}
}
