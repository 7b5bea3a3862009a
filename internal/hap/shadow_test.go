package hap

import (
	"slices"
	"testing"
	"time"
)

var shadowT0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func at(minutes int) time.Time { return shadowT0.Add(time.Duration(minutes) * time.Minute) }

// version is a GA's row of the aws pool held from minute from on.
func version(ga, binding string, db, shoots, limit, rank int, from int) CandidateVersion {
	l := limit
	return CandidateVersion{Candidate: Candidate{GlobalAccountID: ga, Pool: awsPool, BindingName: binding, DBCount: db, ShootCount: shoots,
		EffectiveCount: max(db, shoots), Limit: &l, Selectable: max(db, shoots) < limit, Rank: rank}, ValidFrom: at(from)}
}

func kebPick(id, ga, binding string, minute int) KEBPick {
	return KEBPick{InstanceID: id, GlobalAccountID: ga, Pool: awsPool, BindingName: binding, At: at(minute)}
}

func outcomesOf(results []ShadowResult) map[string]string {
	out := map[string]string{}
	for _, r := range results {
		out[r.InstanceID] = r.Outcome
	}
	return out
}

func TestShadowNamesWhyAPickDiffers(t *testing.T) {
	rewrites := []Rewrite{{WrittenAt: at(0), SnapshotAt: at(-1)}}
	versions := []CandidateVersion{
		version("ga-a", "a-1", 3, 3, 10, 1, 0),
		version("ga-a", "a-2", 1, 1, 10, 2, 0),
		// ga-b's most populated binding is full by shoots: the deviation.
		version("ga-b", "b-1", 5, 10, 10, 2, 0),
		version("ga-b", "b-2", 2, 2, 10, 1, 0),
	}
	picks := []KEBPick{
		kebPick("agree", "ga-a", "a-1", 1),
		kebPick("drift", "ga-a", "a-2", 2),     // KEB counted differently
		kebPick("claim", "ga-a", "a-new", 3),   // a binding the table did not list
		kebPick("deviation", "ga-b", "b-1", 1), // KEB over-fills b-1
		kebPick("stale", "ga-b", "b-2", 45),    // the table is 46 minutes old
	}
	got := outcomesOf(CompareShadow(picks, versions, rewrites, 30*time.Minute))
	want := map[string]string{"agree": ShadowAgree, "drift": ShadowDrift, "claim": ShadowClaim,
		"deviation": ShadowDeviation, "stale": ShadowStaleness}
	for id, outcome := range want {
		if got[id] != outcome {
			t.Errorf("%s: outcome %q, want %q (all: %v)", id, got[id], outcome, got)
		}
	}
}

// In a shared pool an order the table and KEB see differently is its own
// outcome, outside drift: both bindings are in the pool.
func TestShadowFilesASharedOrderApartFromDrift(t *testing.T) {
	rewrites := []Rewrite{{WrittenAt: at(0), SnapshotAt: at(-1)}}
	shared := func(binding string, shoots int) CandidateVersion {
		return CandidateVersion{Candidate: Candidate{Pool: awsPool, BindingName: binding, ShootCount: shoots, EffectiveCount: shoots,
			Selectable: true}, ValidFrom: at(0)}
	}
	versions := []CandidateVersion{shared("s-1", 3), shared("s-2", 5)}
	picks := []KEBPick{kebPick("same", "", "s-1", 1), kebPick("other", "", "s-2", 2)}
	got := outcomesOf(CompareShadow(picks, versions, rewrites, time.Hour))
	if got["same"] != ShadowAgree || got["other"] != ShadowSharedOrder {
		t.Fatalf("outcomes %v; want same: agree, other: %s", got, ShadowSharedOrder)
	}
}

// Between two runs the table counts the picks it answered: once a binding
// is full by them, it answers the next one, as NextBinding's reservations
// do; a claim it answered makes the claimed binding the next answer.
func TestShadowCountsWhatTheTableWouldHaveReservedAndClaimed(t *testing.T) {
	rewrites := []Rewrite{{WrittenAt: at(0), SnapshotAt: at(0)}}
	versions := []CandidateVersion{version("ga-a", "a-1", 8, 8, 10, 1, 0)}
	picks := []KEBPick{
		kebPick("p1", "ga-a", "a-1", 1),
		kebPick("p2", "ga-a", "a-1", 2),
		kebPick("p3", "ga-a", "a-new", 3), // a-1 is full: both claim
		kebPick("p4", "ga-a", "a-new", 4), // the claimed binding, known to both
	}
	results := CompareShadow(picks, versions, rewrites, time.Hour)
	for _, r := range results {
		if r.Outcome != ShadowAgree {
			t.Errorf("%s: %s (%s), table %q; want agree", r.InstanceID, r.Outcome, r.Detail, r.Table)
		}
	}
	if len(results) != 4 {
		t.Fatalf("%d results, want 4", len(results))
	}
}

// A pick compared in an earlier run is replayed for its reservation but not
// reported again; a pick before the first rewrite has nothing to compare with.
func TestShadowReportsEachPickOnce(t *testing.T) {
	rewrites := []Rewrite{{WrittenAt: at(0), SnapshotAt: at(0)}}
	versions := []CandidateVersion{version("ga-a", "a-1", 9, 9, 10, 1, 0)}
	earlier := kebPick("p1", "ga-a", "a-1", 1)
	earlier.Compared = true
	picks := []KEBPick{kebPick("p0", "ga-a", "a-1", -5), earlier, kebPick("p2", "ga-a", "a-2", 2)}
	results := CompareShadow(picks, versions, rewrites, time.Hour)
	if len(results) != 1 || results[0].InstanceID != "p2" || results[0].Outcome != ShadowAgree {
		t.Fatalf("results %+v; want only p2, agreeing on a claim (a-1 full with p1's reservation)", results)
	}
}

// The table as it stood at the pick: a later rewrite does not answer for an
// earlier pick, and a row's old version does not answer for a later one.
func TestShadowUsesTheTableAsItStoodAtThePick(t *testing.T) {
	rewrites := []Rewrite{{WrittenAt: at(0), SnapshotAt: at(0)}, {WrittenAt: at(10), SnapshotAt: at(10)}}
	old := version("ga-a", "a-1", 1, 1, 10, 1, 0)
	old.ValidTo = at(10)
	versions := []CandidateVersion{old, version("ga-a", "a-2", 2, 2, 10, 2, 0),
		version("ga-a", "a-1", 1, 1, 10, 2, 10), version("ga-a", "a-2", 3, 3, 10, 1, 10)}
	versions[1].ValidTo = at(10)
	got := outcomesOf(CompareShadow([]KEBPick{kebPick("before", "ga-a", "a-1", 5), kebPick("after", "ga-a", "a-2", 15)}, versions, rewrites, time.Hour))
	if got["before"] != ShadowAgree || got["after"] != ShadowAgree {
		t.Fatalf("outcomes %v; want both to agree with the table of their moment", got)
	}
}

// Only a group with a pick still to compare needs the table's history: a
// group whose picks all have results is left out, and each group is named
// once, in order.
func TestGroupsToCompareNamesTheGroupsWithANewPick(t *testing.T) {
	done := kebPick("p0", "ga-done", "d-1", 1)
	done.Compared = true
	eu := kebPick("p3", "ga-a", "a-eu", 4)
	eu.Pool = Pool{HyperscalerType: "aws", EUAccess: true}
	shared := kebPick("p4", "", "shared-1", 5)
	picks := []KEBPick{done, kebPick("p1", "ga-b", "b-1", 2), kebPick("p2", "ga-a", "a-1", 3), eu, shared, kebPick("p5", "ga-a", "a-1", 6)}
	got := GroupsToCompare(picks)
	want := []ShadowGroup{{"", awsPool}, {"ga-a", awsPool}, {"ga-a", eu.Pool}, {"ga-b", awsPool}}
	if !slices.Equal(got, want) {
		t.Errorf("groups %v; want %v", got, want)
	}
	if got := GroupsToCompare([]KEBPick{done}); len(got) != 0 {
		t.Errorf("groups of compared picks only: %v; want none", got)
	}
}
