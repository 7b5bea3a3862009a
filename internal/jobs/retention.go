package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/setting"
)

// RetentionSettings are the section retention of the configuration file:
// how long the job keeps the rows of its tables that nothing needs any
// more. Every run applies it after its jobs, whichever jobs it ran: a table
// one job writes and another prunes (the candidate history, written by
// candidates and read by shadow) stays bounded with the other job off.
// The shadow history is kept for shadow.window plus shadow.maxAge, what
// the shadow job compares, so that the two never disagree.
type RetentionSettings struct {
	// ResolvedFindings is how long a drift finding is kept once resolved.
	ResolvedFindings setting.Duration `json:"resolvedFindings"`
	// ReleaseAudit is how long a release's audit rows are kept.
	ReleaseAudit setting.Duration `json:"releaseAudit"`
}

func defaultRetention() RetentionSettings {
	return RetentionSettings{
		ResolvedFindings: setting.Duration{Duration: 30 * 24 * time.Hour},
		ReleaseAudit:     setting.Duration{Duration: 90 * 24 * time.Hour},
	}
}

func (r RetentionSettings) check() error {
	if err := setting.Positive("retention.resolvedFindings", r.ResolvedFindings); err != nil {
		return err
	}
	return setting.Positive("retention.releaseAudit", r.ReleaseAudit)
}

// keeps returns what s keeps: retention.*, and the shadow history for the
// shadow job's window and maxAge.
func (s Setup) keeps() hap.Retention {
	return hap.Retention{ResolvedFindings: s.Retention.ResolvedFindings.Duration, ReleaseAudit: s.Retention.ReleaseAudit.Duration,
		ShadowHistory: s.Shadow.Window.Duration + s.Shadow.MaxAge.Duration}
}

// retentionStore is what the retention step needs of the database.
type retentionStore interface {
	// PruneTables forgets the rows older than keep that nothing needs.
	PruneTables(ctx context.Context, keep hap.Retention) error
	// TableRows counts every table's rows, by table.
	TableRows(ctx context.Context) (map[string]int64, error)
}

// retentionMetrics is what the retention step reports.
type retentionMetrics interface {
	SetTableRows(rows map[string]int64)
}

// retention is the step every run ends with: it prunes what keep says,
// then counts every table's rows.
type retention struct {
	keep    hap.Retention
	dryRun  DryRun
	store   retentionStore
	metrics retentionMetrics
}

func newRetention(p Ports, keep hap.Retention, dryRun DryRun) *retention {
	return &retention{keep: keep, dryRun: dryRun, store: p.Store, metrics: p.Metrics}
}

// Run prunes, unless the run writes nothing, and counts. A dry run still
// counts: it only reads.
func (r *retention) Run(ctx context.Context) error {
	if !r.dryRun.WritesNothing() {
		if err := r.store.PruneTables(ctx, r.keep); err != nil {
			return fmt.Errorf("retention: %w", err)
		}
	}
	rows, err := r.store.TableRows(ctx)
	if err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	r.metrics.SetTableRows(rows)
	return nil
}
