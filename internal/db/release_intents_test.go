package db

import (
	"slices"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// An outcome row settles the intent it names and no other: a conflict of a
// later attempt on the same binding leaves an earlier intent open, whose
// update may have landed after all. Intents from before outcome rows named
// theirs are settled, as then, by any later outcome row of the binding.
// An intent gets one outcome row, however many runs settle it.
func TestOpenReleaseIntentsAreThoseNoOutcomeNames(t *testing.T) {
	s, _ := migratedStore(t)
	ctx := testContext(t)
	row := func(binding, outcome, resourceVersion string, intent int64) int64 {
		t.Helper()
		id, err := s.RecordRelease(ctx, hap.ReleaseRecord{BindingName: binding, GlobalAccountID: "ga", Mode: "dirty",
			Outcome: outcome, ResourceVersion: resourceVersion, IntentID: intent})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	earlier := row("b-1", hap.OutcomeIntent, "7", 0)
	later := row("b-1", hap.OutcomeIntent, "7", 0)
	row("b-1", hap.OutcomeConflict, "", later)
	settled := row("b-2", hap.OutcomeIntent, "9", 0)
	row("b-2", hap.OutcomeReleased, "", settled)
	// A second run settling the same intent at once records nothing.
	if again := row("b-2", hap.OutcomeReleased, "", settled); again != 0 {
		t.Errorf("a second outcome of intent %d was written as row %d", settled, again)
	}
	// Written before migration 7: no resourceVersion, no intent named.
	err := s.db.WithContext(ctx).Exec(`INSERT INTO ` + s.table("binding_releases") + ` (binding_name, global_account_id, hyperscaler_type,
		eu_access, mode, reason, dry_run, outcome) VALUES ('b-3', 'ga', '', false, 'dirty', '', false, 'intent'),
		('b-4', 'ga', '', false, 'dirty', '', false, 'intent'), ('b-4', 'ga', '', false, 'dirty', '', false, 'aborted')`).Error
	if err != nil {
		t.Fatal(err)
	}

	open, err := s.OpenReleaseIntents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range open {
		got = append(got, in.BindingName)
		if in.Age < 0 || in.At.IsZero() {
			t.Errorf("intent %+v: want its age and time on the database's clock", in)
		}
		if in.BindingName == "b-1" && (in.ID != earlier || in.ResourceVersion != "7") {
			t.Errorf("open intent of b-1: %+v, want the earlier one, %d, at version 7", in, earlier)
		}
	}
	if want := []string{"b-1", "b-3"}; !slices.Equal(got, want) {
		t.Errorf("open intents of %v, want %v", got, want)
	}
}
