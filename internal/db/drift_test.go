package db

import (
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

func TestRecordFindingsKeepsFirstSeenAndResolvesWhatDisappeared(t *testing.T) {
	s, _ := migratedStore(t)
	ctx := testContext(t)
	aws := hap.Pool{HyperscalerType: "aws"}
	mismatch := func(counts int) hap.Finding {
		return hap.Finding{BindingName: "b-1", GlobalAccountID: "ga-a", Pool: aws, Kind: hap.KindCountMismatch, DBCount: counts, ShootCount: counts + 1}
	}
	overLimit := hap.Finding{BindingName: "b-2", GlobalAccountID: "ga-a", Pool: aws, Kind: hap.KindOverLimit, DBCount: 201}
	crossTenant := hap.Finding{BindingName: "b-1", GlobalAccountID: "ga-x", Pool: aws, Kind: hap.KindCrossTenant, DBCount: 1}
	t1 := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	t2, t3 := t1.Add(time.Hour), t1.Add(2*time.Hour)

	var changes hap.DriftChanges
	record := func(now time.Time, findings ...hap.Finding) (int, int) {
		t.Helper()
		var err error
		changes, err = s.RecordFindings(ctx, findings, now)
		if err != nil {
			t.Fatalf("RecordFindings at %s: %v", now, err)
		}
		return len(changes.Opened), len(changes.Resolved)
	}

	if opened, resolved := record(t1, mismatch(5), overLimit); opened != 2 || resolved != 0 {
		t.Fatalf("first run: opened %d, resolved %d; want 2, 0", opened, resolved)
	}
	if opened, resolved := record(t2, mismatch(7), crossTenant); opened != 1 || resolved != 1 {
		t.Fatalf("second run: opened %d, resolved %d; want 1 (cross tenant), 1 (over limit)", opened, resolved)
	}
	if o := changes.Opened[0]; o != crossTenant {
		t.Errorf("second run opened %+v, want the cross-tenant finding", o)
	}
	if r := changes.Resolved[0]; r.Finding != overLimit || !r.FirstSeen.Equal(t1) || !r.LastSeen.Equal(t1) {
		t.Errorf("second run resolved %+v, want the over-limit finding as seen at %s", r, t1)
	}

	open, err := s.OpenFindings(ctx, "ga-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 {
		t.Fatalf("open findings of ga-a: %+v, want only the mismatch", open)
	}
	m := open[0]
	if m.Kind != hap.KindCountMismatch || m.DBCount != 7 || m.ShootCount != 8 || !m.FirstSeen.Equal(t1) || !m.LastSeen.Equal(t2) {
		t.Errorf("mismatch after the second run: %+v; want counts 7/8, first seen %s, last seen %s", m, t1, t2)
	}
	all, err := s.OpenFindings(ctx, hap.AllGlobalAccounts)
	if err != nil || len(all) != 2 {
		t.Fatalf("open findings of all GAs: %+v, %v; want mismatch and cross tenant", all, err)
	}
	var resolvedAt time.Time
	if err := s.db.Raw("SELECT resolved_at FROM hap.binding_drift WHERE kind = 'over_limit'").Scan(&resolvedAt).Error; err != nil || !resolvedAt.Equal(t2) {
		t.Errorf("over-limit finding resolved at %s (%v), want %s", resolvedAt, err, t2)
	}

	// A finding that comes back opens a new row; the resolved one stays as history.
	if opened, resolved := record(t3, overLimit); opened != 1 || resolved != 2 {
		t.Fatalf("third run: opened %d, resolved %d; want 1, 2", opened, resolved)
	}
	var rows int
	if err := s.db.Raw("SELECT count(*) FROM hap.binding_drift WHERE kind = 'over_limit'").Scan(&rows).Error; err != nil || rows != 2 {
		t.Errorf("over-limit rows: %d (%v), want 2", rows, err)
	}

	// A run without findings resolves everything.
	if opened, resolved := record(t3.Add(time.Hour)); opened != 0 || resolved != 1 {
		t.Fatalf("empty run: opened %d, resolved %d; want 0, 1", opened, resolved)
	}
}

func TestRecordFindingsRefusesDuplicates(t *testing.T) {
	s, _ := migratedStore(t)
	f := hap.Finding{BindingName: "b-1", GlobalAccountID: "ga-a", Kind: hap.KindOverLimit}
	_, err := s.RecordFindings(testContext(t), []hap.Finding{f, f}, time.Now())
	if err == nil || !containsAll(err.Error(), `"b-1"`, `"over_limit"`, "twice") {
		t.Fatalf("duplicate findings: %v; want an error naming them", err)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
