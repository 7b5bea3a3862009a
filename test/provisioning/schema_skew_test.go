package provisioning_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// The skew policy (docs/deployment.md#the-skew-between-kebs-module-and-the-jobs-schema),
// both ways, on the job's real schema: a module reads the versions
// schema.ModuleReads names and answers every request on another with
// ErrSchemaSkew, a live-path answer that names the range and the version,
// before any statement on the job's tables: nothing reserved, no statement
// failing on a table or column that is not there.

// A module newer than the job's schema: the job was rolled back (migrate
// --down) below what the module's statements read.
func TestANewerModuleHandsOffOnAnOlderSchema(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(10))}, nil)
	req := provisioning.Request{InstanceID: "i-1", GlobalAccountID: "ga-a", HyperscalerType: "aws"}
	if err := b.requested(testContext(t), req.InstanceID, req.GlobalAccountID); err != nil {
		t.Fatal(err)
	}
	picksB1(t, b, req, "on the job's schema as this release migrates it")

	if _, err := b.store.MigrateDown(testContext(t), 1); err != nil {
		t.Fatal(err)
	}
	handsOffWithSkew(t, b, req, fmt.Sprintf("records version %d", schema.Oldest-1))
}

// A module older than the job's schema: the job's next migration only adds
// (the policy), so the module pinned before it still picks; a schema past
// what the module reads is refused as a whole.
func TestAnOlderModuleReadsTheNextSchemaAndNoFurther(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(10))}, nil)
	// The next release's migration, as the policy allows it: a table and a
	// column more, nothing this module reads dropped or changed.
	b.exec(t, `CREATE TABLE hap.next_release_table (id bigint PRIMARY KEY)`)
	b.exec(t, `ALTER TABLE hap.binding_candidates ADD COLUMN next_release_column text NOT NULL DEFAULT ''`)
	b.exec(t, fmt.Sprintf(`UPDATE hap.hap_reconciler_migrations SET version = %d`, schema.Newest))
	req := provisioning.Request{InstanceID: "i-1", GlobalAccountID: "ga-a", HyperscalerType: "aws"}
	if err := b.requested(testContext(t), req.InstanceID, req.GlobalAccountID); err != nil {
		t.Fatal(err)
	}
	picksB1(t, b, req, fmt.Sprintf("on schema %d", schema.Newest))

	// One release further the job may drop what this module reads (as
	// migration 0009 dropped snapshot_instances): the module refuses the
	// schema before a statement could fail on it.
	b.exec(t, fmt.Sprintf(`UPDATE hap.hap_reconciler_migrations SET version = %d`, schema.Newest+1))
	handsOffWithSkew(t, b, req, fmt.Sprintf("records version %d", schema.Newest+1))
}

// picksB1 holds a new client's NextBinding for req to b-1, then voids the
// reservation, so that the next look starts from the same table.
func picksB1(t *testing.T, b *bed, req provisioning.Request, what string) {
	t.Helper()
	if pick, err := (&provisioning.Client{DB: b.keb, Gardener: fitFor("ga-a")}).NextBinding(testContext(t), req); err != nil || pick.Binding != "b-1" {
		t.Fatalf("%s: %+v, %v; want b-1", what, pick, err)
	}
	b.exec(t, `DELETE FROM hap.binding_reservations`)
	b.exec(t, `UPDATE hap.binding_candidates SET reserved = 0`)
}

// handsOffWithSkew holds a new client's NextBinding for req to a live-path
// hand-off with ErrSchemaSkew that says mention, reserving nothing.
func handsOffWithSkew(t *testing.T, b *bed, req provisioning.Request, mention string) {
	t.Helper()
	pick, err := (&provisioning.Client{DB: b.keb, Gardener: fitFor("ga-a")}).NextBinding(testContext(t), req)
	if !errors.Is(err, provisioning.ErrSchemaSkew) || !provisioning.LivePath(err) || pick.Binding != "" || pick.ClaimNew {
		t.Fatalf("%+v, %v; want a live-path hand-off with ErrSchemaSkew", pick, err)
	}
	for _, m := range []string{mention, "reads versions " + schema.ModuleReads().String()} {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("%q does not say %q", err, m)
		}
	}
	if r := b.reserved(t); r["b-1"] != 0 {
		t.Errorf("b-1 reserved %d, want the table untouched", r["b-1"])
	}
}

// One client, kept as KEB's replica keeps it, through a rollback of the job
// below what it reads and the upgrade back: the rollback ends its picks at
// once (the first statement that fails on the older schema has the next
// pick read the version again, and hand off with ErrSchemaSkew), and the
// upgrade back is picked from at the next pick, not a look interval
// (a minute) later.
func TestAClientFollowsARollbackAndTheUpgradeBackAtTheNextPick(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(10))}, nil)
	client := &provisioning.Client{DB: b.keb, Gardener: fitFor("ga-a")}
	t.Cleanup(func() { _ = client.Close() })
	n := 0
	next := func() (provisioning.Pick, error) {
		n++
		req := provisioning.Request{InstanceID: fmt.Sprintf("i-%d", n), GlobalAccountID: "ga-a", HyperscalerType: "aws"}
		if err := b.requested(testContext(t), req.InstanceID, req.GlobalAccountID); err != nil {
			t.Fatal(err)
		}
		return client.NextBinding(testContext(t), req)
	}
	if pick, err := next(); err != nil || pick.Binding != "b-1" {
		t.Fatalf("on the job's schema: %+v, %v; want b-1", pick, err)
	}

	if _, err := b.store.MigrateDown(testContext(t), 1); err != nil {
		t.Fatal(err)
	}
	// The pick in flight when the rollback lands: its statement may fail
	// on the dropped column, a live-path answer like any database error.
	if pick, err := next(); err == nil || !provisioning.LivePath(err) {
		t.Fatalf("the first pick after the rollback: %+v, %v; want a live-path answer", pick, err)
	}
	if pick, err := next(); !errors.Is(err, provisioning.ErrSchemaSkew) {
		t.Fatalf("the next pick after the rollback: %+v, %v; want ErrSchemaSkew", pick, err)
	}

	if _, err := b.store.MigrateUp(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if pick, err := next(); err != nil || pick.Binding != "b-1" {
		t.Fatalf("the first pick after the upgrade back: %+v, %v; want b-1", pick, err)
	}
}
