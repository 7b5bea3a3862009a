package provisioning_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// NextBinding answers from the table only while KEB's index is there and
// valid: without it, and with the INVALID index a failed concurrent build
// leaves, it hands the request to KEB's live path with ErrNoKEBIndex, which
// names the index and the migration, and reserves nothing; with the valid
// index it picks.
func TestNextBindingHandsOffWithoutAValidKEBIndex(t *testing.T) {
	b := newBed(t)
	b.replace(t, []hap.Candidate{candidate("ga-a", "b-1", 1, 1, limit(10))}, nil)
	req := provisioning.Request{InstanceID: "i-1", GlobalAccountID: "ga-a", HyperscalerType: "aws"}
	if err := b.requested(testContext(t), req.InstanceID, req.GlobalAccountID); err != nil {
		t.Fatal(err)
	}
	gardener := fitFor("ga-a")
	handsOff := func(client *provisioning.Client, what, mention string) {
		t.Helper()
		pick, err := client.NextBinding(testContext(t), req)
		if !errors.Is(err, provisioning.ErrNoKEBIndex) || !provisioning.LivePath(err) || pick.Binding != "" || pick.ClaimNew {
			t.Fatalf("%s: %+v, %v; want a live-path hand-off with ErrNoKEBIndex", what, pick, err)
		}
		for _, m := range []string{schema.KEBIndexName, "schema.KEBIndexUp", mention} {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %q does not mention %q", what, err, m)
			}
		}
		if r := b.reserved(t); r["b-1"] != 0 {
			t.Errorf("%s: b-1 reserved %d, want the table untouched", what, r["b-1"])
		}
	}

	b.exec(t, schema.KEBIndexDown)
	handsOff(&provisioning.Client{DB: b.keb, Gardener: gardener}, "without KEB's index", "does not exist")

	if err := pg.LeaveKEBIndexInvalid(testContext(t), b.dbname); err != nil {
		t.Fatal(err)
	}
	invalid := &provisioning.Client{DB: b.keb, Gardener: gardener}
	handsOff(invalid, "with the INVALID index a failed build left", "INVALID")

	// KEB's recovery: drop the invalid index and run the migration again.
	// A client relies on its last look for a minute (kebIndexRecheck); a new one sees
	// the index valid and picks.
	b.exec(t, schema.KEBIndexDown)
	b.exec(t, schema.KEBIndexUp)
	handsOff(invalid, "within a minute of the last look", "INVALID")
	pick, err := (&provisioning.Client{DB: b.keb, Gardener: gardener}).NextBinding(testContext(t), req)
	if err != nil || pick.Binding != "b-1" {
		t.Fatalf("with KEB's index valid: %+v, %v; want b-1", pick, err)
	}
}

// fitFor is Gardener showing every binding asked for as the named GA's, of
// the aws pool.
type fitFor string

func (f fitFor) CredentialsBinding(_ context.Context, name string) (provisioning.Binding, bool, error) {
	return provisioning.Binding{Name: name, Labels: map[string]string{
		schema.LabelHyperscalerType: "aws", schema.LabelTenantName: string(f)}}, true, nil
}

func (f fitFor) CredentialsBindings(context.Context, string) ([]provisioning.Binding, error) {
	return nil, nil
}
