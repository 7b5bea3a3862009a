package provisioning_test

import (
	"errors"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// A GA and pool under KEB's guard get neither a binding nor "claim new":
// KEB fails that provisioning (resolveWithMultiAccountSupport).
func TestAGuardedGAGetsErrGuarded(t *testing.T) {
	b := newBed(t)
	guarded := func(c hap.Candidate) hap.Candidate { c.Guarded = true; return c }
	b.replace(t, []hap.Candidate{
		guarded(candidate("ga", "a-1", 0, 1, limit(5))),
		guarded(candidate("ga", "a-2", 0, 2, limit(5))),
		candidate("other", "o-1", 0, 1, limit(5)),
	}, nil)
	name, claimNew, err := b.pick(testContext(t), "i-1", "ga")
	if !errors.Is(err, provisioning.ErrGuarded) || name != "" || claimNew {
		t.Fatalf("guarded GA: got %q, claimNew %v, err %v; want ErrGuarded", name, claimNew, err)
	}
	if got := b.reserved(t); got["a-1"]+got["a-2"] != 0 {
		t.Fatalf("a guarded pick reserved %v", got)
	}
	if got := b.mustPick(t, "i-2", "other"); got != "o-1" {
		t.Fatalf("another GA of the pool is not guarded: got %q", got)
	}
}

// KEB's API server lists bindings in byte order of names, and KEB's shared
// pick keeps the first of the least used. A cluster created with a non-C
// locale sorts "aws1a" before "aws-1b"; the pick must not.
func TestPicksBreakTiesInByteOrderWhateverTheCollation(t *testing.T) {
	ctx := testContext(t)
	collating, err := testbed.StartPostgresWithLocale(ctx, testbed.CollatingLocale)
	if err != nil {
		t.Fatalf("a cluster in %s (hack/ensure-tools.sh generates the locale): %v", testbed.CollatingLocale, err)
	}
	t.Cleanup(func() { _ = collating.Stop() })
	b := newBedOn(t, collating)
	var textOrder string
	if err := b.keb.QueryRowContext(ctx, `SELECT min(n) FROM (VALUES ('aws-1b'), ('aws1a')) v(n)`).Scan(&textOrder); err != nil {
		t.Fatal(err)
	}
	if textOrder != "aws1a" {
		t.Fatalf("the cluster sorts %q first: its collation is byte order, the test would prove nothing", textOrder)
	}
	shared := func(name string, rank int) hap.Candidate {
		return hap.Candidate{Pool: aws, BindingName: name, Selectable: true, Rank: rank}
	}
	b.replace(t, []hap.Candidate{shared("aws1a", 2), shared("aws-1b", 1)}, nil)
	if got := b.mustPick(t, "i-1", ""); got != "aws-1b" {
		t.Fatalf("shared tie: got %q, want aws-1b, first in byte order", got)
	}
	rows, err := b.store.Candidates(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].BindingName != "aws-1b" {
		t.Fatalf("the report lists %+v; want aws-1b first", rows)
	}
}
