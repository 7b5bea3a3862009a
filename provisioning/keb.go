package provisioning

import (
	_ "embed"
	"fmt"
)

// KEB's rules as SQL, written once: the job's own queries of KEB's
// instances table use them too, so the pick and the job never disagree on
// which instance counts for whom.

// ActiveInstanceSQL is KEB's test of an active instance row: KEB marks a
// deleted row with deleted_at and leaves the zero time on the others.
const ActiveInstanceSQL = "deleted_at = '0001-01-01 00:00:00+00'"

// OwnerSQL returns KEB's owner of the instances row aliased alias, the GA
// whose count KEB puts it in (GetInstanceCountPerBinding): the subscription
// GA when set, else the instance's GA. A row whose subscription GA is NULL
// matches neither of KEB's conditions and is counted for no GA: ”.
func OwnerSQL(alias string) string {
	return fmt.Sprintf(`CASE WHEN %[1]s.subscription_global_account_id IS NULL THEN ''
                WHEN %[1]s.subscription_global_account_id <> '' THEN %[1]s.subscription_global_account_id
                ELSE %[1]s.global_account_id END`, alias)
}

// KEBIndexName is the index on KEB's instances table the pick counts
// through (KEBIndexMigrationUp).
const KEBIndexName = "instances_active_by_binding"

// KEBIndexMigrationUp is the migration KEB adds to its own golang-migrate
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
// outside a transaction only when it holds a single statement (a second statement
// would put both in one transaction, where CONCURRENTLY is refused). A
// build that fails or is cancelled leaves the index behind marked INVALID
// (pg_index.indisvalid false), golang-migrate marks the version dirty, and
// IF NOT EXISTS would keep the invalid index on a rerun. KEB recovers by
// dropping it (KEBIndexMigrationDown), forcing golang-migrate's version
// back to the one before this migration, and running the migration again.
// The read path and check treat an invalid index as missing.
//
//go:embed keb_migration/instances_active_by_binding.up.sql
var KEBIndexMigrationUp string

// KEBIndexMigrationDown reverts KEBIndexMigrationUp, or drops the invalid
// index a failed build left: one DROP INDEX CONCURRENTLY, which does not
// block KEB's writes either.
//
//go:embed keb_migration/instances_active_by_binding.down.sql
var KEBIndexMigrationDown string

// The labels KEB's selectors read on a CredentialsBinding
// (common/gardener, internal/subscriptions/label_selector.go).
const (
	LabelHyperscalerType = "hyperscalerType"
	LabelEUAccess        = "euAccess"
	LabelTenantName      = "tenantName"
	LabelShared          = "shared"
	LabelDirty           = "dirty"
)

// TenantSelector is the label selector KEB's resolve step lists a GA's
// bindings of the request's pool with (BuildForTenantMatching), or the
// shared pool's bindings when the request names no GA.
func (req Request) TenantSelector() string {
	s := LabelHyperscalerType + "=" + req.HyperscalerType
	if req.EUAccess {
		s += "," + LabelEUAccess + "=true"
	} else {
		s += ",!" + LabelEUAccess
	}
	if req.GlobalAccountID == "" {
		return s + "," + LabelShared + "=true"
	}
	return s + "," + LabelShared + "!=true,!" + LabelDirty + "," + LabelTenantName + "=" + req.GlobalAccountID
}

// rejects says why KEB's selector for req (TenantSelector) would not return
// b, or what Gardener would refuse of a shoot on it; "" when b is fit. A
// label KEB requires absent must be absent whatever its value, and a label
// it requires "true" must be exactly that, as a label selector reads them.
func (req Request) rejects(b Binding) string {
	const required = "true" // the one value of a label KEB's selector requires
	label := func(key string) (string, bool) { v, ok := b.Labels[key]; return v, ok }
	if v, _ := label(LabelHyperscalerType); v != req.HyperscalerType {
		return fmt.Sprintf("its %s is %q, not %q", LabelHyperscalerType, v, req.HyperscalerType)
	}
	if v, ok := label(LabelEUAccess); req.EUAccess && v != required {
		return fmt.Sprintf("it is not in the EU access pool (%s %q)", LabelEUAccess, v)
	} else if !req.EUAccess && ok {
		return fmt.Sprintf("it is in no pool outside EU access (%s %q)", LabelEUAccess, v)
	}
	shared, _ := label(LabelShared)
	if req.GlobalAccountID == "" {
		if shared != required {
			return fmt.Sprintf("it is not shared (%s %q)", LabelShared, shared)
		}
	} else {
		if shared == required {
			return "it is shared"
		}
		if v, ok := label(LabelDirty); ok {
			return fmt.Sprintf("it is marked %s (%q)", LabelDirty, v)
		}
		if v, _ := label(LabelTenantName); v != req.GlobalAccountID {
			return fmt.Sprintf("its %s is %q", LabelTenantName, v)
		}
	}
	if req.ProviderType != "" && b.ProviderType != "" && b.ProviderType != req.ProviderType {
		return fmt.Sprintf("its provider is %q, the runtime's %q", b.ProviderType, req.ProviderType)
	}
	return ""
}
