package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

func migrateCmd(g *globals) *cobra.Command {
	var down int
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or update the job's own schema in KEB's database, then exit",
		Long: `Applies the job's versioned migrations (golang-migrate) to its schema
(database.schema, default hap), recorded in hap_reconciler_migrations there,
and logs which it applied. Safe to run any number of times and from several
pods at once; run and serve apply them at start too. A schema recorded by
an earlier release's migrator is taken over. KEB's own tables are never
touched.

--down N reverts the newest N migrations instead, with this release's down
files: before rolling back to a release that knows fewer migrations. It
drops what those migrations added, rows included.`,
		Example: `  hap-reconciler migrate --config config.yaml
  hap-reconciler migrate --down 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("down") && down < 1 {
				return usageError{fmt.Errorf("--down %d: want the number of migrations to revert, at least 1", down)}
			}
			needs := openForMigrate
			if down > 0 {
				needs = openForMigrateDown
			}
			env, err := g.openSchema(cmd.Context(), needs)
			if err != nil {
				return err
			}
			defer env.Close()
			if down > 0 {
				reverted, err := env.Store.MigrateDown(cmd.Context(), down)
				if len(reverted) > 0 {
					env.Log.Info("reverted migrations", zap.String("schema", env.Store.Schema()), zap.Stringers("migrations", reverted))
				}
				if err != nil {
					return fmt.Errorf("migrate --down %d: %w", down, err)
				}
			}
			v, err := env.Store.SchemaVersion(cmd.Context())
			if err != nil {
				return err
			}
			env.Log.Info("schema version", zap.String("schema", v.Schema), zap.Uint("version", v.Version), zap.Uint("latest", v.Latest))
			return nil
		},
	}
	cmd.Flags().IntVar(&down, "down", 0, "revert the newest N migrations instead of applying the missing ones")
	return cmd
}
