package app

import (
	"time"

	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/report"
)

// This file is the one place that turns the failures an operator meets
// (no access to the namespace, wrong database credentials, missing schema,
// Gardener kinds not served, ...) into one line saying what to check. It
// wraps the ports the jobs use, so the CLI, the scheduled runs of serve and
// the demo all say the same.

// explained is a failure with what to check, followed by its cause.
type explained struct {
	hint string
	err  error
}

func (e *explained) Error() string { return e.hint + " (" + e.err.Error() + ")" }
func (e *explained) Unwrap() error { return e.err }

// hintOf returns what to check when err is a failure this package recognised.
func hintOf(err error) (string, bool) {
	var e *explained
	if errors.As(err, &e) {
		return e.hint, true
	}
	return "", false
}

func explain(err error, hint string, args ...any) error {
	return &explained{hint: fmt.Sprintf(hint, args...), err: err}
}

// gardenerRequest says what failed, for the hint.
type gardenerRequest struct {
	namespace string
	host      string
	resource  string // shoots or credentialsbindings
	list      bool
}

// explainGardener returns err with what to check, or err unchanged when
// there is nothing to add: a binding that is not found on a get, say, is
// news for the caller, not a setup problem.
func explainGardener(err error, r gardenerRequest) error {
	if err == nil || alreadyExplained(err) || errors.Is(err, context.Canceled) {
		return err
	}
	where := "Gardener"
	if r.host != "" {
		where = "Gardener at " + r.host
	}
	switch {
	case apierrors.IsForbidden(err):
		return explain(err, "no access to %s in Gardener project namespace %q: check that the job's identity (the kubeconfig's user or the pod's service account) "+
			"may get, list and watch shoots and credentialsbindings there, and to release, patch credentialsbindings and get the secrets they reference, "+
			"which Gardener's admission asks of whoever changes a binding (the Role of manifests/hap-reconciler/templates/rbac.yaml)", r.resource, r.namespace)
	case apierrors.IsUnauthorized(err):
		return explain(err, "%s rejected the job's credentials: check that the kubeconfig's token or client certificate is valid and not expired", where)
	case r.list && apierrors.IsNotFound(err):
		return explain(err, "%s does not serve %s: check that the kubeconfig points at the Gardener API of the project (the garden cluster), "+
			"not at a shoot or seed cluster, and that it serves core.gardener.cloud/v1beta1 shoots and security.gardener.cloud/v1alpha1 credentialsbindings", where, r.resource)
	case utilnet.IsConnectionRefused(err) || utilnet.IsNoRoutesError(err) || isDNSFailure(err):
		return explain(err, "cannot reach %s: check the server address in the kubeconfig and that the network lets the job through", where)
	}
	return err
}

func isDNSFailure(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// explainDatabase returns err with what to check, or err unchanged.
func explainDatabase(err error, schema string) error {
	if err == nil || alreadyExplained(err) || errors.Is(err, context.Canceled) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return explainPostgres(err, pgErr, schema)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return explain(err, "cannot reach KEB's database: check the host and port (--database-url, DATABASE_URL or APP_DATABASE_HOST and APP_DATABASE_PORT) "+
			"and that the server is running and lets the job through")
	}
	return err
}

// explainDatabaseOr is explainDatabase with a fallback: an error it does not
// recognise gets context instead.
func explainDatabaseOr(err error, schema, what string) error {
	explained := explainDatabase(err, schema)
	if alreadyExplained(explained) {
		return explained
	}
	return fmt.Errorf("%s: %w", what, err)
}

// explainPostgres reads PostgreSQL's error codes
// (https://www.postgresql.org/docs/current/errcodes-appendix.html).
func explainPostgres(err error, pgErr *pgconn.PgError, schema string) error {
	switch pgErr.Code {
	case "28P01", "28000": // invalid_password, invalid_authorization_specification
		return explain(err, "KEB's database refused the job's login: check the user and password "+
			"(--database-url, DATABASE_URL, or APP_DATABASE_USER and APP_DATABASE_PASSWORD)")
	case "3D000": // invalid_catalog_name
		return explain(err, "the database does not exist on that server: check the database name (the path of --database-url or DATABASE_URL, or APP_DATABASE_NAME)")
	case "3F000": // invalid_schema_name
		return missingSchema(err, schema)
	case "42P01": // undefined_table
		if strings.Contains(pgErr.Message, `"`+schema+".") {
			return missingSchema(err, schema)
		}
		return explain(err, "a table is missing: check that the URL names KEB's database, which holds the instances table")
	case "42501": // insufficient_privilege
		return explain(err, "the job's database role lacks a privilege: check its grants (SELECT on KEB's instances table, "+
			"and its own schema %q or CREATE on the database; docs/deployment.md)", schema)
	}
	return err
}

func missingSchema(err error, schema string) error {
	return explain(err, "the job's tables are not in schema %q of this database: run `hap-reconciler migrate` against it first, "+
		"or check database.schema in the configuration", schema)
}

func alreadyExplained(err error) bool {
	_, ok := hintOf(err)
	return ok
}

// explainingGardener explains the failures of any Gardener source.
type explainingGardener struct {
	jobs.Gardener
	namespace string
	host      string
}

func (g explainingGardener) request(resource string, list bool) gardenerRequest {
	return gardenerRequest{namespace: g.namespace, host: g.host, resource: resource, list: list}
}

func (g explainingGardener) ListBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) error {
	return explainGardener(g.Gardener.ListBindings(ctx, onReset, fn, skipped), g.request("credentialsbindings", true))
}

func (g explainingGardener) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	return explainGardener(g.Gardener.ListShoots(ctx, onReset, fn), g.request("shoots", true))
}

func (g explainingGardener) ListShootsLive(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	return explainGardener(g.Gardener.ListShootsLive(ctx, onReset, fn), g.request("shoots", true))
}

func (g explainingGardener) GetBinding(ctx context.Context, name string) (hap.Binding, error) {
	b, err := g.Gardener.GetBinding(ctx, name)
	return b, explainGardener(err, g.request("credentialsbindings", false))
}

// explainingStore explains the failures of the run's first read of the
// database, where a missing table or grant shows.
type explainingStore struct {
	jobs.Store
	schema string
}

func (s explainingStore) ReadInstanceCounts(ctx context.Context) (hap.InstanceRead, error) {
	read, err := s.Store.ReadInstanceCounts(ctx)
	return read, explainDatabase(err, s.schema)
}

// explainingReports explains the failures of reading the job's tables for
// a report, the first thing a report run before any migrate meets.
type explainingReports struct {
	report.Store
	schema string
}

func (r explainingReports) Candidates(ctx context.Context, ga string) ([]hap.StoredCandidate, error) {
	rows, err := r.Store.Candidates(ctx, ga)
	return rows, explainDatabase(err, r.schema)
}

func (r explainingReports) OpenFindings(ctx context.Context, ga string) ([]hap.OpenFinding, error) {
	rows, err := r.Store.OpenFindings(ctx, ga)
	return rows, explainDatabase(err, r.schema)
}

func (r explainingReports) ShadowPicks(ctx context.Context, since time.Time) ([]hap.ShadowResult, error) {
	rows, err := r.Store.ShadowPicks(ctx, since)
	return rows, explainDatabase(err, r.schema)
}

func (r explainingReports) PoolHistory(ctx context.Context, since time.Time) (map[hap.Pool][]hap.PoolSample, error) {
	history, err := r.Store.PoolHistory(ctx, since)
	return history, explainDatabase(err, r.schema)
}
