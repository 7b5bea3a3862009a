package main

import (
	"errors"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/app"
)

// openForUndo reads the release history and writes the binding; the
// schema must be this release's, as for a dry run, and nothing migrates.
var openForUndo = app.Needs{Gardener: true, Database: true, CurrentSchema: true}

func undoReleaseCmd(g *globals) *cobra.Command {
	var req app.UndoRequest
	cmd := &cobra.Command{
		Use:   "undo-release",
		Short: "Give a binding the release job marked dirty back to its global account",
		Long: `Undoes a wrong release: removes the dirty label the release job set on the
binding, keeps tenantName, and records the undo (outcome undone, with
--reason) in hap.binding_releases. KEB's selectors for the global account
(tenantName=GA, !dirty) return the binding again, and subscription-cleanup-job,
which lists dirty=true bindings, no longer takes it.

It undoes only what the release history shows the job did, on a binding that
still shows it: a release recorded as released (the binding's newest, or
--release ID, the id in the binding's hap-reconciler.kyma-project.io/release
annotation), the binding carrying that annotation, still dirty and still
claimed by the same global account. Once subscription-cleanup-job removed
dirty and tenantName the account was wiped, and it refuses. The write is
guarded by the binding's resourceVersion. Stop the releases first
(release.enabled: false), or the next run may release the binding again:
docs/runbook.md, "Undoing a wrong release".`,
		Example: `  hap-reconciler undo-release --binding aws-0042 --reason "released with 3 clusters, INC-1234" --dry-run
  hap-reconciler undo-release --binding aws-0042 --reason "released with 3 clusters, INC-1234"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if req.Binding == "" {
				return usageError{errors.New("--binding: name the credentials binding whose release to undo")}
			}
			if req.Reason == "" {
				return usageError{errors.New("--reason: say why the release is undone (an incident, a ticket); it is recorded in hap.binding_releases")}
			}
			if req.Release < 0 {
				return usageError{errors.New("--release: want the release's id (its intent row, the binding's release annotation), at least 1")}
			}
			env, err := g.open(cmd.Context(), openForUndo)
			if err != nil {
				return err
			}
			defer env.Close()
			done, err := env.UndoRelease(cmd.Context(), req)
			if err != nil {
				return err
			}
			fields := []zap.Field{zap.String("binding", done.Binding), zap.Int64("release", done.Release),
				zap.String("globalAccount", done.GlobalAccountID), zap.Stringer("pool", done.Pool)}
			if req.DryRun {
				env.Log.Info("dry run: the release can be undone; nothing changed", fields...)
				return nil
			}
			env.Log.Info("release undone: dirty removed, tenantName kept; KEB's selectors for the global account return the binding again", fields...)
			return nil
		},
	}
	cmd.Flags().StringVar(&req.Binding, "binding", "", "the credentials binding whose release to undo")
	cmd.Flags().Int64Var(&req.Release, "release", 0, "the release to undo: its id, the binding's hap-reconciler.kyma-project.io/release annotation (default the binding's newest)")
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why the release is undone (an incident, a ticket), recorded in hap.binding_releases")
	cmd.Flags().BoolVar(&req.DryRun, "dry-run", false, "check that the release can be undone, change nothing")
	return cmd
}
