package jobs_test

import (
	"slices"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/jobstest"
)

// What came of a release whose answer was lost is read back from the
// binding, on the fakes; release_lost_reply_test.go does it against the
// real API server.

// releasedCount reads hap_reconciler_releases_total of one outcome.
func releasedCount(t *testing.T, s *fakeScene, outcome string) float64 {
	t.Helper()
	families, err := s.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "hap_reconciler_releases_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func TestALostAnswerToAReleaseThatLandedIsAuditedReleasedAtOnce(t *testing.T) {
	s := newFakeScene(t)
	s.gardener.Mark = func(string) (bool, error) { return true, jobstest.ErrAnswerLost }
	if err := s.run(t, jobs.NoDryRun, jobs.JobRelease); err != nil {
		t.Fatalf("a release that landed, read back, failed the run: %v", err)
	}
	if got, want := outcomes(s.store.Releases()), []string{"aws-idle:intent", "aws-idle:released"}; !slices.Equal(got, want) {
		t.Errorf("release history %v, want %v", got, want)
	}
	if n := releasedCount(t, s, hap.OutcomeAborted); n != 0 {
		t.Errorf("%v releases counted aborted", n)
	}
}

// A release cut before it reached the API server leaves the binding as it
// was, which cannot tell it from one still on its way; so the job voids it
// with a write guarded by the same version (the update can then never
// land) and records it aborted. The next run releases the binding.
func TestALostAnswerToAReleaseThatDidNotLandIsVoidedAndAuditedAborted(t *testing.T) {
	s := newFakeScene(t)
	s.gardener.Mark = func(string) (bool, error) { return false, jobstest.ErrAnswerLost }
	if err := s.run(t, jobs.NoDryRun, jobs.JobRelease); err == nil {
		t.Fatal("a release that did not land passed for done")
	}
	if _, dirty := s.gardener.Labels("aws-idle")[hap.LabelDirty]; dirty {
		t.Fatal("the scene is broken: the release landed")
	}
	s.gardener.Mark = nil
	if err := s.run(t, jobs.NoDryRun, jobs.JobRelease); err != nil {
		t.Fatal(err)
	}
	want := []string{"aws-idle:intent", "aws-idle:aborted", "aws-idle:intent", "aws-idle:released"}
	history := s.store.Releases()
	if got := outcomes(history); !slices.Equal(got, want) {
		t.Fatalf("release history %v, want %v", got, want)
	}
	if history[1].IntentID != history[0].ID || history[3].IntentID != history[2].ID {
		t.Errorf("outcome rows name intents %d and %d, want %d and %d", history[1].IntentID, history[3].IntentID, history[0].ID, history[2].ID)
	}
}

// A release that landed while its answer was lost, and could not even be
// read back, is settled released by the next run even after the cleanup
// freed the binding and another GA claimed it: the release's mark stays.
func TestAReleaseIsToldFromItsMarkAfterTheBindingWasCleanedAndClaimedAgain(t *testing.T) {
	s := newFakeScene(t)
	s.gardener.Mark = func(string) (bool, error) {
		s.gardener.GetErr = jobstest.ErrAnswerLost // and the read-back fails too
		return true, jobstest.ErrAnswerLost
	}
	if err := s.run(t, jobs.NoDryRun, jobs.JobRelease); err == nil {
		t.Fatal("the run succeeded without knowing what came of its release")
	}
	s.gardener.PutBinding("aws-idle", map[string]string{hap.LabelHyperscalerType: "aws", hap.LabelTenantName: "ga-3"})
	s.gardener.PutShoot(hap.Shoot{Name: "c4", BindingName: "aws-idle", RuntimeID: "rt-4"})
	s.gardener.Mark, s.gardener.GetErr = nil, nil
	if err := s.run(t, jobs.NoDryRun, jobs.JobRelease); err != nil {
		t.Fatal(err)
	}
	if got, want := outcomes(s.store.Releases()), []string{"aws-idle:intent", "aws-idle:released"}; !slices.Equal(got, want) {
		t.Errorf("release history %v, want %v", got, want)
	}
}
