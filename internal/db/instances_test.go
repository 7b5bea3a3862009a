package db

import (
	"reflect"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

func TestReadInstanceCounts(t *testing.T) {
	s, dbname := migratedStore(t)
	insertInstances(t, dbname,
		instance{id: "i-1", runtimeID: "r-1", ga: "ga-a", subscriptionGA: str(""), binding: str("b-1")},
		// Deleted: not counted, whatever it references.
		instance{id: "i-2", runtimeID: "r-2", ga: "ga-a", binding: str("b-1"), deleted: true},
		// The subscription GA owns the account, not the instance's own GA.
		instance{id: "i-3", runtimeID: "r-3", ga: "ga-b", subscriptionGA: str("ga-a"), binding: str("b-1")},
		// NULL subscription GA: KEB's GetInstanceCountPerBinding counts the
		// row for no GA (its condition is NULL), so it has no owner here.
		instance{id: "i-4", runtimeID: "r-4", ga: "ga-c", binding: str("b-2")},
		instance{id: "i-8", runtimeID: "r-8", ga: "ga-c", subscriptionGA: str(""), binding: str("b-2")},
		// Not yet assigned, both spellings.
		instance{id: "i-5", runtimeID: "r-5", ga: "ga-c", subscriptionGA: str(""), binding: str("")},
		instance{id: "i-6", runtimeID: "r-6", ga: "ga-d", subscriptionGA: str("")},
		// Another GA in the same binding is its own row.
		instance{id: "i-7", runtimeID: "r-7", ga: "ga-e", subscriptionGA: str(""), binding: str("b-1")},
	)
	exec(t, dbname, `INSERT INTO hap.binding_reservations (instance_id, binding_name, global_account_id, hyperscaler_type, eu_access) VALUES
		('i-1', 'b-1', 'ga-a', 'aws', false),        -- its instance is counted: absorbed
		('i-2', 'b-1', 'ga-a', 'aws', false),        -- deleted since, but the snapshot saw it: absorbed
		('i-pending', 'b-1', 'ga-a', 'aws', false),  -- KEB has not written it yet
		('i-4', 'b-9', 'ga-c', 'aws', false)         -- the instance went elsewhere: not this reservation's count`)

	read, err := s.ReadInstanceCounts(testContext(t))
	if err != nil {
		t.Fatalf("ReadInstanceCounts: %v", err)
	}
	type row struct {
		binding, ga string
		active      int
		runtimes    []string
	}
	var got []row
	for _, c := range read.Counts {
		got = append(got, row{c.BindingName, c.GlobalAccountID, c.Active, c.RuntimeIDs.Strings()})
	}
	want := []row{
		{"", "ga-c", 1, []string{"r-5"}},
		{"", "ga-d", 1, []string{"r-6"}},
		{"b-1", "ga-a", 2, []string{"r-1", "r-3"}},
		{"b-1", "ga-e", 1, []string{"r-7"}},
		{"b-2", hap.NoOwner, 1, []string{"r-4"}},
		{"b-2", "ga-c", 1, []string{"r-8"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("counts:\n got %v\nwant %v", got, want)
	}
	if want := []string{"i-1", "i-2"}; !reflect.DeepEqual(read.Absorbed, want) {
		t.Errorf("absorbed reservations: got %v, want %v", read.Absorbed, want)
	}
	if read.TakenAt.IsZero() {
		t.Error("TakenAt is not set")
	}

	active, err := s.ActiveInstancesOn(testContext(t), "b-1")
	if err != nil || active != 3 {
		t.Errorf("ActiveInstancesOn(b-1) = %d, %v; want 3 (deleted i-2 excluded)", active, err)
	}
	reservations, err := s.ReservationsOn(testContext(t), "b-1")
	if err != nil || reservations != 3 {
		t.Errorf("ReservationsOn(b-1) = %d, %v; want 3", reservations, err)
	}
}

func TestReadInstanceCountsOfAnEmptyTable(t *testing.T) {
	s, _ := migratedStore(t)
	read, err := s.ReadInstanceCounts(testContext(t))
	if err != nil {
		t.Fatalf("ReadInstanceCounts: %v", err)
	}
	if len(read.Counts) != 0 || len(read.Absorbed) != 0 || read.TakenAt.IsZero() {
		t.Errorf("empty table read as %+v", read)
	}
}

// HasKEBIndex counts only a valid index: a missing one and the INVALID one
// a failed concurrent build leaves are both missing, as the read path
// counts them.
func TestHasKEBIndexWantsItValid(t *testing.T) {
	s, name := migratedStore(t)
	has := func(what string, want bool) {
		t.Helper()
		if got, err := s.HasKEBIndex(testContext(t)); err != nil || got != want {
			t.Fatalf("%s: HasKEBIndex %t, %v; want %t", what, got, err, want)
		}
	}
	has("the index built", true)
	exec(t, name, schema.KEBIndexDown)
	has("the index dropped", false)
	if err := pg.LeaveKEBIndexInvalid(testContext(t), name); err != nil {
		t.Fatal(err)
	}
	has("the index INVALID", false)
	exec(t, name, schema.KEBIndexDown)
	exec(t, name, schema.KEBIndexUp)
	has("the index dropped and built again", true)
}
