package db

import (
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

func TestRetireCandidateWithdrawsOnlyAnUnusedBinding(t *testing.T) {
	s, name := migratedStore(t)
	ctx := testContext(t)
	limit := 10
	rows := []hap.Candidate{
		{GlobalAccountID: "ga", Pool: hap.Pool{HyperscalerType: "aws"}, BindingName: "empty", Limit: &limit, Selectable: true, Rank: 1},
		{GlobalAccountID: "ga", Pool: hap.Pool{HyperscalerType: "aws"}, BindingName: "reserved", Limit: &limit, Selectable: true, Rank: 2},
		{GlobalAccountID: "ga", Pool: hap.Pool{HyperscalerType: "aws"}, BindingName: "busy", Limit: &limit, Selectable: true, Rank: 3},
	}
	if err := s.ReplaceCandidates(ctx, rows, nil, time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	exec(t, name, `INSERT INTO hap.binding_reservations (instance_id, binding_name, global_account_id, hyperscaler_type, eu_access)
		VALUES ('i-1', 'reserved', 'ga', 'aws', false)`)
	exec(t, name, `INSERT INTO instances (instance_id, runtime_id, global_account_id, subscription_secret_name, provisioning_parameters, created_at, updated_at)
		VALUES ('i-2', 'r-2', 'ga', 'busy', '{}', now(), now()),
		       ('i-3', 'r-3', 'ga', 'empty', '{}', now(), now())`)
	exec(t, name, `UPDATE instances SET deleted_at = now() WHERE instance_id = 'i-3'`)

	for binding, wantUse := range map[string]int{"empty": 0, "reserved": 1, "busy": 1} {
		dry, err := s.InUse(ctx, binding)
		if err != nil || dry != wantUse {
			t.Fatalf("InUse(%s) = %d, %v; want %d", binding, dry, err, wantUse)
		}
		got, err := s.RetireCandidate(ctx, binding)
		if err != nil || got != wantUse {
			t.Fatalf("RetireCandidate(%s) = %d, %v; want %d", binding, got, err, wantUse)
		}
	}
	stored, err := s.Candidates(ctx, "ga")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range stored {
		if want := c.BindingName != "empty"; c.Selectable != want {
			t.Errorf("%s: selectable %v, want %v", c.BindingName, c.Selectable, want)
		}
	}
	if n, err := s.RetireCandidate(ctx, "no-such-row"); err != nil || n != 0 {
		t.Fatalf("binding without a candidate row: %d, %v", n, err)
	}
}
