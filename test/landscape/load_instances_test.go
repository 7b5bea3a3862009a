package landscape

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestLoadInstancesCopiesEveryRowAsGenerated(t *testing.T) {
	testbed.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pg, err := testbed.StartPostgres(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	url, err := pg.NewDatabase(ctx, "landscape")
	if err != nil {
		t.Fatal(err)
	}
	l := Generate(Options{Seed: 11, GlobalAccounts: 20})
	if err := LoadInstances(ctx, url, l); err != nil {
		t.Fatal(err)
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var want struct{ total, active, deleted, suspended, unassigned, subscribed int }
	for _, i := range l.Instances {
		want.total++
		if i.Active() {
			want.active++
		} else {
			want.deleted++
		}
		if i.Suspended() {
			want.suspended++
		}
		if i.Active() && i.SubscriptionSecretName == "" {
			want.unassigned++
		}
		if i.SubscriptionGlobalAccountID != "" {
			want.subscribed++
		}
	}
	for name, n := range map[string]int{"deleted": want.deleted, "suspended": want.suspended, "unassigned": want.unassigned, "subscribed": want.subscribed} {
		if n == 0 {
			t.Fatalf("landscape has no %s instance; the generator lost a case", name)
		}
	}
	var got struct{ total, active, deleted, suspended, unassigned, subscribed int }
	// The zero time must land as KEB's "active" marker, and the suspended
	// flag must be readable the way KEB's JSON is read.
	err = conn.QueryRow(ctx, `SELECT
		count(*),
		count(*) FILTER (WHERE deleted_at = '0001-01-01 00:00:00+00'),
		count(*) FILTER (WHERE deleted_at <> '0001-01-01 00:00:00+00'),
		count(*) FILTER (WHERE (provisioning_parameters::jsonb -> 'ers_context' ->> 'active') = 'false'),
		count(*) FILTER (WHERE deleted_at = '0001-01-01 00:00:00+00' AND subscription_secret_name = ''),
		count(*) FILTER (WHERE subscription_global_account_id <> '')
		FROM instances`).Scan(&got.total, &got.active, &got.deleted, &got.suspended, &got.unassigned, &got.subscribed)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("instances table holds %+v, want %+v", got, want)
	}
}
