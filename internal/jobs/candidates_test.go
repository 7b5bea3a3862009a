package jobs_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// The candidates job on the fakes; the table's rewrite itself meets
// PostgreSQL in internal/db and test/provisioning.

// A candidates run ends the withdrawals its snapshot shows over (made before
// it, binding not dirty or gone) and keeps the others.
func TestCandidatesEndWithdrawalsTheSnapshotShowsOver(t *testing.T) {
	s := newFakeScene(t)
	s.gardener.PutBinding("aws-dirty", map[string]string{hap.LabelHyperscalerType: "aws", hap.LabelTenantName: "ga-3", hap.LabelDirty: "true"})
	before, after := s.now.Add(-2*time.Minute), s.now.Add(-30*time.Second)
	s.store.Withdraw("aws-dirty", before) // KEB freed it; the cleanup has not run
	s.store.Withdraw("aws-idle", before)  // never marked after all
	s.store.Withdraw("aws-gone", before)  // deleted from Gardener
	s.store.Withdraw("aws-free", after)   // withdrawn too shortly before the snapshot to be sure it shows
	if err := s.run(t, jobs.NoDryRun, jobs.JobCandidates); err != nil {
		t.Fatal(err)
	}
	if got, want := s.store.Withdrawn(), []string{"aws-dirty", "aws-free"}; !slices.Equal(got, want) {
		t.Fatalf("withdrawn after the run: %v, want %v", got, want)
	}
}

// A rewrite that fails keeps the table KEB reads as it was, ends no
// withdrawal and does not move the table's age: the run fails, and the
// table's age says how long KEB has read an older one.
func TestAFailedRewriteKeepsThePreviousTableAndFailsTheRun(t *testing.T) {
	s := newFakeScene(t)
	if err := s.run(t, jobs.NoDryRun, jobs.JobCandidates); err != nil {
		t.Fatal(err)
	}
	rows, computed := s.store.Candidates()
	age := snapshotSeconds(t, s)

	s.now = s.now.Add(10 * time.Minute)
	s.gardener.PutBinding("aws-new", map[string]string{hap.LabelHyperscalerType: "aws", hap.LabelTenantName: "ga-1"})
	s.store.Withdraw("aws-idle", s.now.Add(-5*time.Minute))
	refused := errors.New("the database refused the rewrite")
	s.store.Fail["ReplaceCandidates"] = refused
	if err := s.run(t, jobs.NoDryRun, jobs.JobCandidates); !errors.Is(err, refused) {
		t.Fatalf("run: %v, want the rewrite's error", err)
	}
	if after, at := s.store.Candidates(); !slices.Equal(after, rows) || !at.Equal(computed) {
		t.Errorf("the table became %v at %s, want the previous one, computed at %s", after, at, computed)
	}
	if got := s.store.Withdrawn(); !slices.Equal(got, []string{"aws-idle"}) {
		t.Errorf("withdrawn after the failed run: %v, want aws-idle still", got)
	}
	if got := snapshotSeconds(t, s); got != age {
		t.Errorf("the table's snapshot time moved to %v after a failed rewrite, want %v", got, age)
	}
}

// snapshotSeconds is the time of the snapshot the table comes from, as the
// job exports it.
func snapshotSeconds(t *testing.T, s *fakeScene) float64 {
	t.Helper()
	families, err := s.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "hap_reconciler_candidate_table_snapshot_timestamp_seconds" && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("hap_reconciler_candidate_table_snapshot_timestamp_seconds is not exported")
	return 0
}
