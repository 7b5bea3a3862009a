package db

import (
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

func TestReplaceCandidatesCountsOnlyLiveReservations(t *testing.T) {
	s, dbname := migratedStore(t)
	ctx := testContext(t)
	aws := hap.Pool{HyperscalerType: "aws"}
	limit := 10
	rows := []hap.Candidate{
		{GlobalAccountID: "ga-a", Pool: aws, BindingName: "b-1", DBCount: 7, EffectiveCount: 7, Limit: &limit, Selectable: true, Rank: 1},
		{GlobalAccountID: "ga-a", Pool: aws, BindingName: "b-2", DBCount: 5, EffectiveCount: 5, Limit: &limit, Selectable: true, Rank: 2},
	}
	if err := s.ReplaceCandidates(ctx, rows, nil, time.Now(), time.Hour); err != nil {
		t.Fatalf("first ReplaceCandidates: %v", err)
	}
	exec(t, dbname, `INSERT INTO hap.binding_reservations (instance_id, binding_name, global_account_id, hyperscaler_type, eu_access, reserved_at) VALUES
		('absorbed', 'b-1', 'ga-a', 'aws', false, now()),
		('pending',  'b-1', 'ga-a', 'aws', false, now()),
		('expired',  'b-2', 'ga-a', 'aws', false, now() - interval '2 hours'),
		('gone',     'b-9', 'ga-a', 'aws', false, now())`)
	rows[0].DBCount, rows[0].EffectiveCount = 8, 8
	if err := s.ReplaceCandidates(ctx, rows, []string{"absorbed"}, time.Now(), time.Hour); err != nil {
		t.Fatalf("second ReplaceCandidates: %v", err)
	}
	got, err := s.Candidates(ctx, "ga-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].BindingName != "b-1" || got[0].Reserved != 1 || got[0].EffectiveCount != 8 ||
		got[1].BindingName != "b-2" || got[1].Reserved != 0 || *got[1].Limit != 10 {
		t.Fatalf("candidates: %+v; want b-1 with 1 reservation (pending) and b-2 with none (expired)", got)
	}
	var left []string
	if err := s.db.Raw("SELECT instance_id FROM hap.binding_reservations ORDER BY 1").Scan(&left).Error; err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 || left[0] != "gone" || left[1] != "pending" {
		t.Errorf("reservations left: %v; want gone (kept until it expires) and pending", left)
	}
	if others, err := s.Candidates(ctx, "ga-b"); err != nil || len(others) != 0 {
		t.Errorf("candidates of another GA: %+v, %v", others, err)
	}
}

func TestReplaceCandidatesRefusesBadRows(t *testing.T) {
	s, _ := migratedStore(t)
	aws := hap.Pool{HyperscalerType: "aws"}
	cases := []struct {
		name    string
		rows    []hap.Candidate
		ttl     time.Duration
		mention []string
	}{
		{"no binding", []hap.Candidate{{Pool: aws}}, time.Hour, []string{"binding name is empty"}},
		{"no pool", []hap.Candidate{{BindingName: "b-1"}}, time.Hour, []string{`"b-1"`, "hyperscaler type"}},
		{"twice", []hap.Candidate{{BindingName: "b-1", Pool: aws}, {BindingName: "b-1", Pool: aws}}, time.Hour, []string{`"b-1"`, "twice"}},
		{"no TTL", nil, 0, []string{"reservation TTL", "0s"}},
	}
	for _, c := range cases {
		err := s.ReplaceCandidates(testContext(t), c.rows, nil, time.Now(), c.ttl)
		if err == nil || !containsAll(err.Error(), c.mention...) {
			t.Errorf("%s: %v; want an error mentioning %v", c.name, err, c.mention)
		}
	}
}

func TestSaveEmptySinceReplacesTheSet(t *testing.T) {
	s, _ := migratedStore(t)
	ctx := testContext(t)
	t1 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(24 * time.Hour)
	if err := s.SaveEmptySince(ctx, map[string]hap.EmptySighting{
		"b-1": {GlobalAccountID: "ga-a", Since: t1},
		"b-2": {GlobalAccountID: "ga-a", Since: t2},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveEmptySince(ctx, map[string]hap.EmptySighting{"b-2": {GlobalAccountID: "ga-a", Since: t2}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.EmptySince(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got["b-2"].Since.Equal(t2) || got["b-2"].GlobalAccountID != "ga-a" {
		t.Errorf("empty since: %v; want only b-2 since %s", got, t2)
	}
	if err := s.SaveEmptySince(ctx, map[string]hap.EmptySighting{"b-3": {GlobalAccountID: "ga-a"}}); err == nil || !containsAll(err.Error(), `"b-3"`) {
		t.Errorf("sighting without time: %v; want an error naming the binding", err)
	}
}

// The history is stamped by the database, whatever time the caller
// passes; each row gets its ID.
func TestRecordRelease(t *testing.T) {
	s, _ := migratedStore(t)
	ctx := testContext(t)
	jobsClock := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	r := hap.ReleaseRecord{BindingName: "b-1", GlobalAccountID: "ga-a", Pool: hap.Pool{HyperscalerType: "aws", EUAccess: true},
		Mode: "release", Reason: "empty for 7 days", DryRun: true, Outcome: hap.OutcomeWouldRelease, At: jobsClock}
	before := databaseNow(t, s)
	id, err := s.RecordRelease(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	after := databaseNow(t, s)
	history, err := s.ReleaseHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 1 || history[0].ID != id || history[0].At.Before(before) || history[0].At.After(after) {
		t.Fatalf("release history %+v, want the one record %d stamped between %s and %s", history, id, before, after)
	}
	if got := history[0]; got.BindingName != "b-1" || !got.Pool.EUAccess || !got.DryRun || got.Outcome != hap.OutcomeWouldRelease ||
		got.Mode != r.Mode || got.Reason != r.Reason || got.GlobalAccountID != "ga-a" {
		t.Errorf("stored %+v, want %+v", got, r)
	}
	r.Outcome = ""
	if _, err := s.RecordRelease(ctx, r); err == nil || !containsAll(err.Error(), `"b-1"`, "outcome") {
		t.Errorf("record without outcome: %v; want an error naming the field", err)
	}
	r.Outcome = hap.OutcomeIntent
	if _, err := s.RecordRelease(ctx, r); err == nil || !containsAll(err.Error(), `"b-1"`, "resourceVersion") {
		t.Errorf("intent without the version its update is guarded by: %v; want an error naming it", err)
	}
}

func databaseNow(t *testing.T, s *Store) time.Time {
	t.Helper()
	var now time.Time
	if err := s.db.WithContext(testContext(t)).Raw("SELECT clock_timestamp()").Scan(&now).Error; err != nil {
		t.Fatal(err)
	}
	return now
}
