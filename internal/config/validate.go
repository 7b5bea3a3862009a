package config

import (
	"net/url"
	"strings"

	"github.com/kyma-project/hap-reconciler/provisioning"
)

// Validate checks every setting and returns the first bad one, naming the
// key and its value. schedules.* are the jobs' to check (jobs.Resolve):
// only the jobs' registry knows their names.
func (c Config) Validate() error {
	if _, err := c.RuleSet(); err != nil {
		return err
	}
	if c.Gardener.PageSize < 1 || c.Gardener.PageSize > 10000 {
		return invalid("gardener.pageSize", c.Gardener.PageSize, "must be between 1 and 10000")
	}
	for key, d := range map[string]Duration{
		"gardener.requestTimeout":   c.Gardener.RequestTimeout,
		"database.connectTimeout":   c.Database.ConnectTimeout,
		"database.statementTimeout": c.Database.StatementTimeout,
		"candidates.reservationTTL": c.Candidates.ReservationTTL,
		"shadow.window":             c.Shadow.Window,
		"shadow.maxAge":             c.Shadow.MaxAge,
	} {
		if d.Duration <= 0 {
			return invalid(key, d.String(), "must be a positive duration")
		}
	}
	if c.Database.Schema == "" || provisioning.CheckSchema(c.Database.Schema) != nil {
		return invalid("database.schema", c.Database.Schema, "must be a lower-case SQL identifier")
	}
	if reason, taken := schemaNotTheJobs(c.Database.Schema); taken {
		return invalid("database.schema", c.Database.Schema, "must be a schema of the job's own: %s", reason)
	}
	switch c.Release.Mode {
	case ReleaseDirty:
	case "unclaim":
		return invalid("release.mode", c.Release.Mode, "is no longer supported: it handed an account nobody had cleaned to the next tenant; "+
			"use %q, the only mode, as KEB does when it frees a binding", ReleaseDirty)
	default:
		return invalid("release.mode", c.Release.Mode, "must be %q", ReleaseDirty)
	}
	if c.Release.GracePeriod.Duration < 0 {
		return invalid("release.gracePeriod", c.Release.GracePeriod.String(), "must not be negative")
	}
	if c.Release.MaxPerRun < 0 {
		return invalid("release.maxPerRun", c.Release.MaxPerRun, "must not be negative")
	}
	if c.Release.GuardRatio < 0 || c.Release.GuardRatio > 1 {
		return invalid("release.guardRatio", c.Release.GuardRatio, "must be between 0 and 1")
	}
	if u := c.Metrics.PushgatewayURL; u != "" {
		if parsed, err := url.Parse(u); err != nil || parsed.Scheme == "" || parsed.Host == "" {
			return invalid("metrics.pushgatewayURL", u, "must be an absolute http(s) URL")
		}
	}
	return nil
}

// schemaNotTheJobs tells whether schema belongs to someone else. public is
// KEB's: KEB keeps its tables there (internal/storage/postsql/init.go,
// schemaName) with golang-migrate's bookkeeping (public.schema_migrations),
// and a drop or a down migration of the job's must never reach them.
// PostgreSQL keeps pg_* and information_schema for itself.
func schemaNotTheJobs(schema string) (reason string, taken bool) {
	switch {
	case schema == "public":
		return "public holds KEB's tables and KEB's schema_migrations", true
	case schema == "information_schema", strings.HasPrefix(schema, "pg_"):
		return "PostgreSQL reserves it for its catalog", true
	}
	return "", false
}
