// Package schema holds the shapes the read path and the hap-reconciler job
// must agree on: which of KEB's instances rows count and for whom, the
// index KEB adds so that a pick counts through it, the labels KEB's
// selectors read on a CredentialsBinding, and the name of the job's schema.
// KEB imports the provisioning package only; the job imports this one too,
// so that its snapshot and its own queries of KEB's table read exactly as a
// pick does.
package schema

import (
	_ "embed"
	"fmt"
	"regexp"
)

// Default is where the job keeps its tables unless configured otherwise.
const Default = "hap"

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Check refuses a schema name that is not a plain identifier: it is
// written into the statements, not passed as a parameter. "" is the
// default.
func Check(name string) error {
	if name != "" && !identifier.MatchString(name) {
		return fmt.Errorf("schema %q: want lower-case letters, digits and _, not starting with a digit, at most 63", name)
	}
	return nil
}

// OrDefault is name, or Default when it is empty.
func OrDefault(name string) string {
	if name == "" {
		return Default
	}
	return name
}

// ActiveInstance is KEB's test of an active instance row: KEB marks a
// deleted row with deleted_at and leaves the zero time on the others.
const ActiveInstance = "deleted_at = '0001-01-01 00:00:00+00'"

// Owner returns KEB's owner of the instances row aliased alias, the GA
// whose count KEB puts it in (GetInstanceCountPerBinding): the subscription
// GA when set, else the instance's GA. A row whose subscription GA is NULL
// matches neither of KEB's conditions and is counted for no GA: ”.
func Owner(alias string) string {
	return fmt.Sprintf(`CASE WHEN %[1]s.subscription_global_account_id IS NULL THEN ''
                WHEN %[1]s.subscription_global_account_id <> '' THEN %[1]s.subscription_global_account_id
                ELSE %[1]s.global_account_id END`, alias)
}

// KEBIndexName is the index on KEB's instances table the pick counts
// through (KEBIndexUp).
const KEBIndexName = "instances_active_by_binding"

// KEBIndexUp is the migration KEB adds to its own golang-migrate
// migrations (resources/keb/migrations) before it reads the table: the
// active instances by binding, with both owner columns, so that counting a
// binding's clusters reads that binding's entries and nothing else. The
// pick counts every candidate binding exactly this way at the moment KEB
// asks; without the index the same count would scan KEB's table on every
// pick, so Client.NextBinding hands every request to KEB's live path
// (ErrNoKEBIndex) until the index is there and valid. KEB's own live count
// (GetInstanceCountPerBinding) filters on the same columns and is served by
// it too. hap-reconciler check says whether it exists and is valid.
//
// It is one CREATE INDEX CONCURRENTLY and nothing else: KEB's inserts and
// updates of instances go on while it builds, and golang-migrate's
// postgres driver, as KEB's schema-migrator configures it (no
// MultiStatementEnabled), sends a file in one Exec, which PostgreSQL runs
// outside a transaction only when it holds a single statement (a second
// statement would put both in one transaction, where CONCURRENTLY is
// refused). A build that fails or is cancelled leaves the index behind
// marked INVALID (pg_index.indisvalid false), golang-migrate marks the
// version dirty, and IF NOT EXISTS would keep the invalid index on a rerun.
// KEB recovers by dropping it (KEBIndexDown), forcing golang-migrate's
// version back to the one before this migration, and running the migration
// again. The read path and check treat an invalid index as missing.
//
//go:embed keb_migration/instances_active_by_binding.up.sql
var KEBIndexUp string

// KEBIndexDown reverts KEBIndexUp, or drops the invalid index a failed
// build left: one DROP INDEX CONCURRENTLY, which does not block KEB's
// writes either.
//
//go:embed keb_migration/instances_active_by_binding.down.sql
var KEBIndexDown string

// The labels KEB's selectors read on a CredentialsBinding
// (common/gardener, internal/subscriptions/label_selector.go).
const (
	LabelHyperscalerType = "hyperscalerType"
	LabelEUAccess        = "euAccess"
	LabelTenantName      = "tenantName"
	LabelShared          = "shared"
	LabelDirty           = "dirty"
)
