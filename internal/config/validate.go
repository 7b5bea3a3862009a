package config

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/redact"
	"github.com/kyma-project/hap-reconciler/internal/setting"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
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
	if c.Database.Schema == "" || schema.Check(c.Database.Schema) != nil {
		return invalid("database.schema", c.Database.Schema, "must be a lower-case SQL identifier")
	}
	if reason, taken := schemaNotTheJobs(c.Database.Schema); taken {
		return invalid("database.schema", c.Database.Schema, "must be a schema of the job's own: %s", reason)
	}
	if c.KEBModule.SchemaOldest < 1 {
		return invalid("kebModule.schemaOldest", c.KEBModule.SchemaOldest, "must be a schema version, 1 or more (schema.Oldest of the module KEB pins)")
	}
	if c.KEBModule.SchemaNewest < c.KEBModule.SchemaOldest {
		return invalid("kebModule.schemaNewest", c.KEBModule.SchemaNewest, "must be kebModule.schemaOldest (%d) or more (schema.Newest of the module KEB pins)", c.KEBModule.SchemaOldest)
	}
	return CheckPushgatewayURL("metrics.pushgatewayURL", c.Metrics.PushgatewayURL)
}

// CheckPushgatewayURL refuses, under key (the file's or the flag's), a
// Pushgateway URL a push could not reach: not http(s), no host, a port
// that is no number. Found at start, it stops the command with exit 2
// instead of failing every push after the run's work. The value is shown
// with its password hidden.
func CheckPushgatewayURL(key, u string) error {
	if u == "" {
		return nil
	}
	parsed, err := url.Parse(u)
	if err == nil && (parsed.Scheme == "http" || parsed.Scheme == "https") && parsed.Hostname() != "" {
		if _, bad := badPort(parsed.Port()); !bad {
			return nil
		}
	}
	return invalid(key, redact.String(u), "must be an absolute http(s) URL with a host and, if any, a numeric port, such as http://pushgateway.monitoring:9091")
}

// badPort reports a port that is not a number from 1 to 65535; "" is none.
func badPort(port string) (int, bool) {
	if port == "" {
		return 0, false
	}
	n, err := strconv.Atoi(port)
	return n, err != nil || n < 1 || n > 65535
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
