package hap

import (
	"reflect"
	"testing"
)

// A list that starts over resets the shoots counted so far: what follows
// counts as if the first attempt never was, with the instances and their
// runtime IDs still there to attribute shoots, and a name only the first
// attempt's shoots used gone.
func TestResetShootsCountsAsAFreshCounter(t *testing.T) {
	instances := []InstanceCount{
		{BindingName: "b-1", GlobalAccountID: "ga-1", Active: 2, RuntimeIDs: RuntimeIDsOf("rt-1", "rt-2")},
		{BindingName: "b-1", GlobalAccountID: "ga-2", Active: 1, RuntimeIDs: RuntimeIDsOf("rt-3")},
		{BindingName: "", GlobalAccountID: "ga-1", Active: 1},
	}
	bindings := []Binding{{Name: "b-1", GlobalAccountID: "ga-1"}, {Name: "b-2", GlobalAccountID: "ga-1"}}
	firstAttempt := []Shoot{{Name: "s-1", BindingName: "b-1", RuntimeID: "rt-1"}, {Name: "s-9", BindingName: "gone", Deleting: true},
		{Name: "s-0"}}
	secondAttempt := []Shoot{{Name: "s-1", BindingName: "b-1", RuntimeID: "rt-1"}, {Name: "s-2", BindingName: "b-2", ViaSecretBinding: true}}

	reset := NewShootCounter(instances)
	for _, s := range firstAttempt {
		reset.Add(s)
	}
	reset.ResetShoots()
	fresh := NewShootCounter(instances)
	for _, s := range secondAttempt {
		reset.Add(s)
		fresh.Add(s)
	}
	got, want := reset.Tally(bindings), fresh.Tally(bindings)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after a reset: %+v\nfresh: %+v", got, want)
	}
	if u := got.Usage("b-1"); u.Shoots != 1 || u.ShootOwners.Of("ga-1") != 1 || u.Instances != 3 {
		t.Errorf("b-1 after a reset: %d shoots, %d of ga-1, %d instances; want 1, 1, 3", u.Shoots, u.ShootOwners.Of("ga-1"), u.Instances)
	}
}
