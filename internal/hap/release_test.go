package hap

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func names(ds []ReleaseDecision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Binding.Name)
	}
	return out
}

func TestReleaseOnlyEmptyReleasableBindingsPastGrace(t *testing.T) {
	f := new(fleet).
		binding("busy", "ga", awsPool).clusters("busy", "ga", 1).
		binding("empty", "ga", awsPool).
		binding("only-shoot", "ga", awsPool).shoots("only-shoot", "ga", 1).
		binding("only-foreign-instance", "ga", awsPool).instances("only-foreign-instance", "other", 1).
		binding("shared", "", awsPool, shared).
		binding("internal", "ga", awsPool, internal).
		binding("dirty", "ga", awsPool, dirty).
		binding("free", "", awsPool)
	f.clusters("elsewhere", "ga", 5) // keeps the global guard calm
	f.binding("elsewhere", "ga", awsPool)
	rules := ReleaseRules{GracePeriod: time.Hour, MaxPerRun: 10, GuardRatio: 0.5}

	first := DecideRelease(f.tally(), nil, rules, t0)
	if len(first.Release) != 0 {
		t.Fatalf("first sighting starts the clock, releases nothing: %v", names(first.Release))
	}
	if len(first.Sightings) != 1 || first.Sightings["empty"].Since != t0 {
		t.Fatalf("sightings: %+v", first.Sightings)
	}
	early := DecideRelease(f.tally(), first.Sightings, rules, t0.Add(59*time.Minute))
	if len(early.Release) != 0 {
		t.Fatalf("inside the grace period: %v", names(early.Release))
	}
	late := DecideRelease(f.tally(), early.Sightings, rules, t0.Add(time.Hour))
	if got := names(late.Release); len(got) != 1 || got[0] != "empty" {
		t.Fatalf("past the grace period: got %v, want [empty]", got)
	}
}

func TestANonEmptySightingRestartsTheClock(t *testing.T) {
	rules := ReleaseRules{GracePeriod: time.Hour, MaxPerRun: 10}
	empty := new(fleet).binding("b", "ga", awsPool)
	busy := new(fleet).binding("b", "ga", awsPool).clusters("b", "ga", 1)
	s := DecideRelease(empty.tally(), nil, rules, t0).Sightings
	s = DecideRelease(busy.tally(), s, rules, t0.Add(30*time.Minute)).Sightings
	if len(s) != 0 {
		t.Fatalf("busy binding keeps no sighting: %+v", s)
	}
	s = DecideRelease(empty.tally(), s, rules, t0.Add(40*time.Minute)).Sightings
	plan := DecideRelease(empty.tally(), s, rules, t0.Add(90*time.Minute))
	if len(plan.Release) != 0 {
		t.Fatalf("clock restarted at +40m, so +90m is inside the grace period")
	}
	if plan = DecideRelease(empty.tally(), s, rules, t0.Add(100*time.Minute)); len(plan.Release) != 1 {
		t.Fatalf("+100m is past it")
	}
}

func TestAClaimByAnotherGARestartsTheClock(t *testing.T) {
	rules := ReleaseRules{GracePeriod: time.Hour, MaxPerRun: 10}
	prev := map[string]EmptySighting{"b": {GlobalAccountID: "old", Since: t0}}
	plan := DecideRelease(new(fleet).binding("b", "new", awsPool).tally(), prev, rules, t0.Add(2*time.Hour))
	if len(plan.Release) != 0 || plan.Sightings["b"].GlobalAccountID != "new" {
		t.Fatalf("plan %+v", plan)
	}
}

func TestMaxPerRunReleasesOldestFirst(t *testing.T) {
	f := new(fleet)
	prev := map[string]EmptySighting{}
	for i, name := range []string{"c", "a", "b"} {
		f.binding(name, "ga", awsPool)
		prev[name] = EmptySighting{GlobalAccountID: "ga", Since: t0.Add(time.Duration(i) * time.Minute)}
	}
	plan := DecideRelease(f.tally(), prev, ReleaseRules{GracePeriod: time.Hour, MaxPerRun: 2}, t0.Add(3*time.Hour))
	if got := names(plan.Release); len(got) != 2 || got[0] != "c" || got[1] != "a" {
		t.Fatalf("release %v, want [c a]", got)
	}
	if got := names(plan.Deferred); len(got) != 1 || got[0] != "b" {
		t.Fatalf("deferred %v, want [b]", got)
	}
}

func TestGlobalGuard(t *testing.T) {
	prev := map[string]EmptySighting{"empty": {GlobalAccountID: "ga", Since: t0}}
	rules := ReleaseRules{GracePeriod: time.Hour, MaxPerRun: 10, GuardRatio: 0.5}
	noDB := new(fleet).binding("empty", "ga", awsPool).binding("busy", "ga", awsPool).shoots("busy", "ga", 3)
	plan := DecideRelease(noDB.tally(), prev, rules, t0.Add(2*time.Hour))
	if plan.GuardTripped == "" || len(plan.Release) != 0 || len(plan.Deferred) != 1 {
		t.Fatalf("empty database must trip the guard: %+v", plan)
	}
	skewed := new(fleet).binding("empty", "ga", awsPool).binding("busy", "ga", awsPool).
		instances("busy", "ga", 10).shoots("busy", "ga", 4)
	if plan = DecideRelease(skewed.tally(), prev, rules, t0.Add(2*time.Hour)); plan.GuardTripped == "" {
		t.Fatalf("10 vs 4 differs by 60%%, beyond 50%%")
	}
	fine := new(fleet).binding("empty", "ga", awsPool).binding("busy", "ga", awsPool).
		instances("busy", "ga", 10).shoots("busy", "ga", 6)
	if plan = DecideRelease(fine.tally(), prev, rules, t0.Add(2*time.Hour)); plan.GuardTripped != "" || len(plan.Release) != 1 {
		t.Fatalf("10 vs 6 is within 50%%: %+v", plan)
	}
}
