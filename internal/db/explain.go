package db

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kyma-project/hap-reconciler/internal/hint"
)

// The Store says what to check when PostgreSQL fails in a way an operator
// meets while setting the job up: the login refused, the database or the
// job's schema missing, a grant lacking, the server out of reach. Open,
// MigrateUp and RequireCurrentSchema explain their failures, and so do the
// reads a run or a report meets first (ReadInstanceCounts, Candidates,
// OpenFindings, ShadowPicks, PoolHistory): the error is then a hint.Error,
// whose hint comes first in its text.

// explain returns err with what to check, or err unchanged.
func explain(err error, schema string) error {
	if err == nil || hint.Has(err) || errors.Is(err, context.Canceled) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return explainPostgres(err, pgErr, schema)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return hint.New(err, "cannot reach KEB's database: check the host and port (--database-url, DATABASE_URL or APP_DATABASE_HOST and APP_DATABASE_PORT) "+
			"and that the server is running and lets the job through")
	}
	return err
}

// explainPostgres reads PostgreSQL's error codes
// (https://www.postgresql.org/docs/current/errcodes-appendix.html).
func explainPostgres(err error, pgErr *pgconn.PgError, schema string) error {
	switch pgErr.Code {
	case "28P01", "28000": // invalid_password, invalid_authorization_specification
		return hint.New(err, "KEB's database refused the job's login: check the user and password "+
			"(--database-url, DATABASE_URL, or APP_DATABASE_USER and APP_DATABASE_PASSWORD)")
	case "3D000": // invalid_catalog_name
		return hint.New(err, "the database does not exist on that server: check the database name (the path of --database-url or DATABASE_URL, or APP_DATABASE_NAME)")
	case "3F000": // invalid_schema_name
		return missingSchema(err, schema)
	case "42P01": // undefined_table
		if strings.Contains(pgErr.Message, `"`+schema+".") {
			return missingSchema(err, schema)
		}
		return hint.New(err, "a table is missing: check that the URL names KEB's database, which holds the instances table")
	case "42501": // insufficient_privilege
		return hint.New(err, "the job's database role lacks a privilege: check its grants (SELECT on KEB's instances table, "+
			"and its own schema %q or CREATE on the database; docs/deployment.md)", schema)
	}
	return err
}

func missingSchema(err error, schema string) error {
	return hint.New(err, "the job's tables are not in schema %q of this database: run `hap-reconciler migrate` against it first, "+
		"or check database.schema in the configuration", schema)
}
