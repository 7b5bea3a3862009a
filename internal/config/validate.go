package config

import (
	"net/url"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/setting"
	"github.com/kyma-project/hap-reconciler/provisioning"
)

// Resolve checks every setting and resolves, once, what the jobs apply
// from KEB's settings: KEB's rules parsed (a list KEB refuses is an *Error
// naming every bad entry) and KEB's multi-account policy, into c.Jobs.KEB.
// It returns the first bad setting, naming the key and its value: KEB's
// rules, the file's own keys, then each job's section and schedules.* as
// the jobs' registry checks them. Load resolves what it returns; a caller
// that builds or changes a Config itself resolves it before use.
func (c *Config) Resolve() error {
	rs, err := c.parseRules()
	if err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return err
	}
	if err := c.Jobs.Check(); err != nil {
		return err
	}
	c.Jobs.KEB = jobs.KEB{Policy: policyOf(c.HAP), Rules: rs}
	c.resolved = true
	return nil
}

// validate checks the file's own keys and returns the first bad one,
// naming the key and its value.
func (c Config) validate() error {
	if c.Gardener.PageSize < 1 || c.Gardener.PageSize > 10000 {
		return invalid("gardener.pageSize", c.Gardener.PageSize, "must be between 1 and 10000")
	}
	for _, d := range []struct {
		key   string
		value Duration
	}{
		{"gardener.requestTimeout", c.Gardener.RequestTimeout},
		{"database.connectTimeout", c.Database.ConnectTimeout},
		{"database.statementTimeout", c.Database.StatementTimeout},
	} {
		if err := setting.Positive(d.key, d.value); err != nil {
			return err
		}
	}
	if c.Database.Schema == "" || provisioning.CheckSchema(c.Database.Schema) != nil {
		return invalid("database.schema", c.Database.Schema, "must be a lower-case SQL identifier")
	}
	if reason, taken := schemaNotTheJobs(c.Database.Schema); taken {
		return invalid("database.schema", c.Database.Schema, "must be a schema of the job's own: %s", reason)
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
