package hap

import (
	"reflect"
	"strings"
	"testing"
)

type findingKey struct {
	Binding string
	Kind    FindingKind
	GA      string
}

func keysOf(fs []Finding) []findingKey {
	var out []findingKey
	for _, f := range fs {
		out = append(out, findingKey{f.BindingName, f.Kind, f.GlobalAccountID})
	}
	return out
}

func TestDriftFindsEveryKind(t *testing.T) {
	f := new(fleet).
		binding("ok", "ga", awsPool).clusters("ok", "ga", 3).
		binding("mismatch", "ga", awsPool).instances("mismatch", "ga", 2).shoots("mismatch", "ga", 3).
		shoots("gone", "ga", 1).
		instances("vanished", "ga2", 1).
		binding("free", "", awsPool).shoots("free", "ga", 1).
		binding("dirty", "ga", awsPool, dirty).instances("dirty", "ga", 1).
		binding("crossdb", "ga", awsPool).clusters("crossdb", "ga", 1).instances("crossdb", "intruder", 1).
		binding("crossshoot", "ga", awsPool).instances("crossshoot", "ga", 1).
		binding("full", "ga", awsPool).clusters("full", "ga", 6).
		binding("shared", "", awsPool, shared).clusters("shared", "x", 2).clusters("shared", "y", 2)
	// A shoot in "crossshoot" whose runtime belongs to another GA's instance.
	f.instances("elsewhere", "thief", 1)
	f.s.Shoots = append(f.s.Shoots, Shoot{Name: "stolen", BindingName: "crossshoot", RuntimeID: "thief-elsewhere-0"})

	got := keysOf(DecideDrift(f.tally(), limits(5, nil), nil))
	want := []findingKey{
		{"crossdb", KindCountMismatch, "ga"},
		{"crossdb", KindCrossTenant, "intruder"},
		{"crossshoot", KindCrossTenant, "thief"},
		{"dirty", KindCountMismatch, "ga"},
		{"dirty", KindDirtyBindingInUse, "ga"},
		{"elsewhere", KindInstanceOnMissingBinding, "thief"},
		{"free", KindCountMismatch, ""},
		{"free", KindFreeBindingInUse, ""},
		{"full", KindOverLimit, "ga"},
		{"gone", KindShootOnMissingBinding, ""},
		{"mismatch", KindCountMismatch, "ga"},
		{"vanished", KindInstanceOnMissingBinding, "ga2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings:\n got %v\nwant %v", got, want)
	}
}

func TestDriftCountsDeletingShootsAsPresent(t *testing.T) {
	f := new(fleet).binding("b", "ga", awsPool).clusters("b", "ga", 2)
	f.s.Shoots[0].Deleting = true
	if got := DecideDrift(f.tally(), Policy{}, nil); len(got) != 0 {
		t.Fatalf("a shoot being deleted is still present: %+v", got)
	}
	f.s.Instances[0].Active = 1 // KEB already marked it deleted
	got := DecideDrift(f.tally(), Policy{}, nil)
	if len(got) != 1 || got[0].Kind != KindCountMismatch || got[0].DeletingShoots != 1 || got[0].ShootCount != 2 {
		t.Fatalf("want one mismatch reporting the deleting shoot separately, got %+v", got)
	}
}

func TestOverLimitOnlyWhereALimitApplies(t *testing.T) {
	f := new(fleet).binding("b", "ga", awsPool).clusters("b", "ga", 6)
	if got := DecideDrift(f.tally(), Policy{DefaultLimit: 5}, nil); len(got) != 0 {
		t.Fatalf("GA without the feature has no limit: %+v", got)
	}
	if got := DecideDrift(f.tally(), limits(6, nil), nil); len(got) != 0 {
		t.Fatalf("at the limit is full, not over it: %+v", got)
	}
}

// An instance KEB counts for no GA (subscription_global_account_id NULL) on
// a GA's binding is named as such, not as the GA "".
func TestDriftNamesInstancesOfNoOwner(t *testing.T) {
	f := new(fleet).binding("b", "ga", awsPool).clusters("b", "ga", 1).instances("b", NoOwner, 1)
	got := DecideDrift(f.tally(), Policy{}, nil)
	var detail string
	for _, finding := range got {
		if finding.Kind == KindCrossTenant {
			detail = finding.Detail
		}
	}
	if want := "1 instance(s) and 0 shoot(s) of no GA (owner columns NULL or empty"; !strings.Contains(detail, want) {
		t.Fatalf("cross-tenant detail %q does not say %q (findings %+v)", detail, want, got)
	}
}
