package jobs_test

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestAnEmptyBindingIsReleasedOnceTheGracePeriodHasPassed(t *testing.T) {
	l := background(1)
	emptyBinding(l, "left-empty", "ga-gone")
	s := newScene(t, l, func(c *config.Config) {
		c.Jobs.Release.Mode = jobs.ReleaseDirty
	})
	before := s.labels(t, "left-empty")

	s.mustRun(t, releaseOnly) // starts the clock
	s.clock.Advance(59 * time.Minute)
	s.mustRun(t, releaseOnly)
	if s.released(t, "left-empty") || len(s.audit(t, "left-empty")) > 0 {
		t.Fatalf("released inside the grace period: labels %v, audit %v", s.labels(t, "left-empty"), s.audit(t, "left-empty"))
	}

	s.clock.Advance(time.Minute)
	s.mustRun(t, releaseOnly)
	want := maps.Clone(before)
	want[hap.LabelDirty] = "true" // tenantName stays for the account cleanup
	if got := s.labels(t, "left-empty"); !maps.Equal(got, want) {
		t.Errorf("labels after release:\n got %v\nwant %v", got, want)
	}
	rows := s.audit(t, "left-empty")
	if len(rows) != 1 {
		t.Fatalf("audit rows: %+v", rows)
	}
	r := rows[0]
	if r.Outcome != hap.OutcomeReleased || r.Mode != jobs.ReleaseDirty || r.DryRun || r.GlobalAccountID != "ga-gone" ||
		r.Pool.HyperscalerType != "aws" || r.Pool.EUAccess || r.IntentID == 0 ||
		!strings.Contains(r.Reason, "grace period 1h0m0s") {
		t.Errorf("audit row %+v", r)
	}
	// The same write marked the binding with the release's intent.
	if mark := s.binding(t, "left-empty").GetAnnotations()[hap.AnnotationRelease]; mark != strconv.FormatInt(r.IntentID, 10) {
		t.Errorf("release mark %q, want the intent %d", mark, r.IntentID)
	}
}

func TestAClusterOnAnEmptyBindingRestartsItsClock(t *testing.T) {
	l := background(2)
	emptyBinding(l, "stays-empty", "ga-a")
	emptyBinding(l, "gets-a-shoot", "ga-b")
	emptyBinding(l, "gets-an-instance", "ga-c")
	s := newScene(t, l, nil)
	s.mustRun(t, releaseOnly) // t0: all three seen empty

	s.clock.Advance(30 * time.Minute)
	shoot := s.addShoot(t, landscape.ShootSpec{BindingName: "gets-a-shoot", GlobalAccountID: "ga-b", RuntimeID: "rt-back", Pool: aws})
	s.insertInstance(t, "inst-back", "ga-c", "gets-an-instance")
	s.mustRun(t, releaseOnly) // t0+30m: two of them hold a cluster

	s.clock.Advance(10 * time.Minute)
	s.deleteShoot(t, shoot)
	s.exec(t, `UPDATE instances SET deleted_at = now() WHERE instance_id = 'inst-back'`)
	s.mustRun(t, releaseOnly) // t0+40m: empty again, their clocks start over

	s.clock.Advance(25 * time.Minute)
	s.mustRun(t, releaseOnly) // t0+65m
	if !s.released(t, "stays-empty") {
		t.Error("the binding empty since t0 is not released after 65 minutes")
	}
	for _, b := range []string{"gets-a-shoot", "gets-an-instance"} {
		if s.released(t, b) {
			t.Errorf("%s released 25 minutes after its cluster went away", b)
		}
	}

	s.clock.Advance(40 * time.Minute)
	s.mustRun(t, releaseOnly) // 65 minutes after they became empty again
	for _, b := range []string{"gets-a-shoot", "gets-an-instance"} {
		if !s.released(t, b) {
			t.Errorf("%s not released a full grace period after its cluster went away", b)
		}
	}
}

func TestAClusterArrivingBetweenDecisionAndActionPreventsTheRelease(t *testing.T) {
	l := background(3)
	emptyBinding(l, "late-shoot", "ga-shoot")
	emptyBinding(l, "late-instance", "ga-instance")
	emptyBinding(l, "late-pick", "ga-pick")
	emptyBinding(l, "control", "ga-control")
	s := newScene(t, l, nil)
	withCandidates := jobs.Options{Jobs: []string{jobs.JobCandidates, jobs.JobRelease}}
	s.mustRun(t, withCandidates)
	s.clock.Advance(61 * time.Minute)

	keb, err := sql.Open("pgx", s.World.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer keb.Close()
	s.env.Runner.BeforeAct = func(job string) {
		if job != jobs.JobRelease {
			return
		}
		s.addShoot(t, landscape.ShootSpec{BindingName: "late-shoot", GlobalAccountID: "ga-shoot", RuntimeID: "rt-late", Pool: aws})
		s.insertInstance(t, "inst-late", "ga-instance", "late-instance")
		pick, err := testbed.Propose(testContext(t), keb, provisioning.Request{
			InstanceID: "inst-pick", GlobalAccountID: "ga-pick", HyperscalerType: "aws",
		})
		if err != nil || pick.ClaimNew || pick.Binding != "late-pick" {
			t.Fatalf("provisioning's pick: %+v, %v", pick, err)
		}
	}
	before := s.versions(t)
	s.mustRun(t, withCandidates)

	changed := s.changedSince(t, before)
	for _, b := range []string{"late-shoot", "late-instance", "late-pick"} {
		if slices.Contains(changed, b) || len(s.audit(t, b)) > 0 {
			t.Errorf("%s changed (%v) or audited (%v) although a cluster arrived before the action", b, s.labels(t, b), s.audit(t, b))
		}
	}
	if !s.released(t, "control") {
		t.Error("the run released nothing at all: the control binding is still claimed")
	}
}

// meddler is the real Gardener port with a hook right before each label
// update, the moment between the re-check and the write.
type meddler struct {
	jobs.Gardener
	beforeUpdate func(binding string)
}

func (m meddler) MarkReleased(ctx context.Context, name, resourceVersion, releaseID string) error {
	m.beforeUpdate(name)
	return m.Gardener.MarkReleased(ctx, name, resourceVersion, releaseID)
}

func TestALabelChangeRacingTheUpdateConflictsAndTheNextRunReleases(t *testing.T) {
	l := background(4)
	emptyBinding(l, "contested", "ga-gone")
	s := newScene(t, l, nil)
	s.startClocks(t)

	port := s.env.Runner.Gardener
	meddled := false
	s.env.Runner.Gardener = meddler{Gardener: port, beforeUpdate: func(name string) {
		if name == "contested" {
			s.setLabel(t, name, "owner-note", "in-review")
			meddled = true
		}
	}}
	if err := s.run(t, releaseOnly); err != nil {
		t.Fatalf("a conflict must not fail the run: %v", err)
	}
	if !meddled {
		t.Fatal("the update of the contested binding was never attempted")
	}
	if got := s.labels(t, "contested"); got[hap.LabelDirty] != "" || got["owner-note"] != "in-review" {
		t.Fatalf("the concurrent change was overwritten or the release landed: %v", got)
	}
	if got := s.outcomes(t, "contested"); !slices.Equal(got, []string{hap.OutcomeConflict}) {
		t.Fatalf("audit outcomes %v, want [conflict]", got)
	}

	s.env.Runner.Gardener = port
	s.mustRun(t, releaseOnly)
	got := s.labels(t, "contested")
	if got[hap.LabelDirty] != "true" || got["owner-note"] != "in-review" || got[hap.LabelTenantName] != "ga-gone" {
		t.Errorf("the next run did not release the still eligible binding as it now is: %v", got)
	}
	if got := s.outcomes(t, "contested"); !slices.Equal(got, []string{hap.OutcomeConflict, hap.OutcomeReleased}) {
		t.Errorf("audit outcomes %v, want [conflict released]", got)
	}
}

func TestABindingRelabelledAfterTheDecisionIsNotReleased(t *testing.T) {
	l := background(5)
	emptyBinding(l, "annotated", "ga-gone")
	emptyBinding(l, "reclaimed", "ga-old")
	emptyBinding(l, "made-internal", "ga-gone-too")
	emptyBinding(l, "made-unreadable", "ga-gone-as-well")
	s := newScene(t, l, nil)
	s.startClocks(t)

	s.env.Runner.BeforeAct = func(job string) {
		s.setLabel(t, "annotated", "owner-note", "in-review")
		s.setLabel(t, "reclaimed", hap.LabelTenantName, "ga-new")
		s.setLabel(t, "made-internal", hap.LabelInternal, "true")
		// Skipped like the others; it must not fail the run for them.
		s.setLabel(t, "made-unreadable", hap.LabelEUAccess, "maybe")
	}
	s.mustRun(t, releaseOnly)
	for _, b := range []string{"annotated", "reclaimed", "made-internal", "made-unreadable"} {
		if got := s.labels(t, b); got[hap.LabelDirty] != "" || len(s.audit(t, b)) > 0 {
			t.Errorf("%s was acted on although its labels changed after the decision: %v", b, got)
		}
	}

	s.env.Runner.BeforeAct = nil
	s.mustRun(t, releaseOnly)
	if !s.released(t, "annotated") {
		t.Error("annotated is still eligible and must be released by the next run")
	}
	if s.released(t, "reclaimed") {
		t.Error("a binding claimed by another GA starts a new grace period")
	}
	if s.released(t, "made-internal") {
		t.Error("an internal binding is never released")
	}
}

func TestSharedInternalAndDirtyBindingsAreNeverTouched(t *testing.T) {
	l := background(6)
	l.AddBinding(landscape.BindingSpec{Name: "claimed-shared", Pool: aws, GlobalAccountID: "ga-x", Shared: true})
	l.AddBinding(landscape.BindingSpec{Name: "claimed-internal", Pool: aws, GlobalAccountID: "ga-x", Internal: true})
	l.AddBinding(landscape.BindingSpec{Name: "claimed-dirty", Pool: aws, GlobalAccountID: "ga-x", Dirty: true})
	emptyBinding(l, "plain-empty", "ga-x")
	s := newScene(t, l, func(c *config.Config) {
		c.Jobs.Release.MaxPerRun = 1000
	})
	before := s.versions(t)
	s.startClocks(t)
	s.mustRun(t, releaseOnly)
	s.clock.Advance(24 * time.Hour)
	s.mustRun(t, releaseOnly)

	want := eligible(l)
	if !slices.Contains(want, "plain-empty") {
		t.Fatalf("the scene is broken: plain-empty is not eligible in %v", want)
	}
	changed := s.changedSince(t, before)
	if !slices.Equal(changed, want) {
		t.Errorf("changed bindings:\n got %v\nwant %v", changed, want)
	}
	for _, b := range l.Bindings {
		for _, flag := range []string{hap.LabelShared, hap.LabelInternal, hap.LabelDirty} {
			if b.Labels[flag] == "true" && slices.Contains(changed, b.Name) {
				t.Errorf("%s binding %s was changed", flag, b.Name)
			}
		}
	}
}

func TestMaxPerRunCapsEveryRun(t *testing.T) {
	l := background(7)
	for i := range 5 {
		emptyBinding(l, fmt.Sprintf("left-empty-%d", i), fmt.Sprintf("ga-gone-%d", i))
	}
	s := newScene(t, l, func(c *config.Config) {
		c.Jobs.Release.MaxPerRun = 2
	})
	want := eligible(l)
	before := s.versions(t)
	s.startClocks(t)
	for done := 0; done < len(want); {
		s.mustRun(t, releaseOnly)
		now := len(s.changedSince(t, before))
		if now-done != min(2, len(want)-done) {
			t.Fatalf("one run released %d binding(s) with %d eligible and maxPerRun 2", now-done, len(want)-done)
		}
		done = now
	}
	if got := s.changedSince(t, before); !slices.Equal(got, want) {
		t.Errorf("released over the runs:\n got %v\nwant %v", got, want)
	}
}

func TestDryRunChangesNoBindingAndRecordsWhatItWouldRelease(t *testing.T) {
	l := background(8)
	emptyBinding(l, "would-go", "ga-gone")
	emptyBinding(l, "would-go-too", "ga-gone-too")
	s := newScene(t, l, func(c *config.Config) {
		c.Jobs.Release.MaxPerRun = 1000
	})
	all := []string{jobs.JobCandidates, jobs.JobRelease}
	s.mustRun(t, jobs.Options{Jobs: all})
	s.clock.Advance(61 * time.Minute)

	before := s.versions(t)
	// --dry-run writes nothing at all, not even its audit.
	s.mustRun(t, jobs.Options{Jobs: all, DryRun: jobs.DryRunAll})
	if changed := s.changedSince(t, before); len(changed) > 0 {
		t.Errorf("a dry run changed %v", changed)
	}
	for _, b := range []string{"would-go", "would-go-too"} {
		if rows := s.audit(t, b); len(rows) != 0 {
			t.Errorf("--dry-run audited %s: %+v", b, rows)
		}
	}
	// --release-dry-run (the chart's release.dryRun) audits what it would
	// release.
	s.mustRun(t, jobs.Options{Jobs: all, DryRun: jobs.DryRunRelease})
	if changed := s.changedSince(t, before); len(changed) > 0 {
		t.Errorf("a release dry run changed %v", changed)
	}
	want := eligible(l)
	if !slices.Contains(want, "would-go") || !slices.Contains(want, "would-go-too") {
		t.Fatalf("the scene is broken: eligible are %v", want)
	}
	for _, b := range want {
		rows := s.audit(t, b)
		if len(rows) != 1 || rows[0].Outcome != hap.OutcomeWouldRelease || !rows[0].DryRun {
			t.Errorf("audit of %s: %+v", b, rows)
		}
	}
	for _, b := range []string{"would-go", "would-go-too"} {
		if !s.selectable(t, b) {
			t.Errorf("a dry run withdrew %s from provisioning's picks", b)
		}
	}

	s.mustRun(t, releaseOnly)
	if changed := s.changedSince(t, before); !slices.Equal(changed, want) {
		t.Errorf("the real run after the dry run released %v, want %v", changed, want)
	}
}

func TestABindingDeletedAfterTheDecisionIsSkipped(t *testing.T) {
	l := background(9)
	emptyBinding(l, "vanishing", "ga-gone")
	emptyBinding(l, "control", "ga-control")
	s := newScene(t, l, nil)
	s.startClocks(t)
	s.env.Runner.BeforeAct = func(string) {
		if err := s.Bindings.Delete(testContext(t), "vanishing", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.run(t, releaseOnly); err != nil {
		t.Fatalf("a binding that is gone is nothing to release, not a failure: %v", err)
	}
	if rows := s.audit(t, "vanishing"); len(rows) > 0 {
		t.Errorf("audit of a binding that is gone: %+v", rows)
	}
	if !s.released(t, "control") {
		t.Error("the other bindings were not released")
	}
}
