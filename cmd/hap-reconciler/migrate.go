package main

import (
	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

func migrateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create or update the job's own schema in KEB's database, then exit",
		Long: `Applies the job's versioned migrations to its schema (database.schema, default
hap). Safe to run any number of times and from several pods at once; run and
serve apply them at start too. KEB's own tables are never touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := g.open(cmd.Context(), openForMigrate)
			if err != nil {
				return err
			}
			defer env.Close()
			env.Log.Info("schema is up to date", zap.String("schema", env.Store.Schema()))
			return nil
		},
	}
}
