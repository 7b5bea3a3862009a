package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/report"
)

// showShadow plays KEB placing two clusters of the spread GA on its own, as
// it does before it reads the table: one where the table names, one on the
// binding the table counts full (as a KEB whose count is behind would). The
// shadow job compares both with the table's answer.
func showShadow(ctx context.Context, n narrator, env *app.Env, databaseURL string) error {
	n.step("KEB places two clusters of %s on its own: one on %s, one on %s, which the table counts full", spreadGA, spreadNext, spreadFull)
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for i, binding := range []string{spreadNext, spreadFull} {
		id := fmt.Sprintf("demo-keb-pick-%d", i+1)
		if _, err := conn.Exec(ctx, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name,
			provider, service_plan_name, provisioning_parameters, created_at, updated_at)
			VALUES ($1, $1, $2, $3, 'AWS', 'aws', '{}', now(), now())`, id, spreadGA, binding); err != nil {
			return err
		}
	}
	if err := env.Runner.Run(ctx, jobs.Options{Jobs: []string{jobs.JobShadow}}); err != nil {
		return fmt.Errorf("the shadow run failed: %w", err)
	}
	rep, err := report.Shadow(ctx, env.Reports, time.Now().Add(-env.Config.Jobs.Shadow.Window.Duration))
	if err != nil {
		return err
	}
	n.step("KEB's own picks against the table, as `hap-reconciler report --shadow` prints them")
	var table bytes.Buffer
	if err := rep.WriteTable(&table, report.Layout{}); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(table.String(), "\n"), "\n") {
		n.note("%s", line)
	}
	return nil
}
