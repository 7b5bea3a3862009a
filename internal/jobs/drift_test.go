package jobs_test

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/testscene"
)

// Drift logs a finding when it opens and when it resolves; a run that
// finds the same drift again logs only its line of counts.
func TestDriftLogsAFindingWhenItOpensAndWhenItResolves(t *testing.T) {
	s := newScene(t, background(41), nil)
	core, logs := observer.New(zapcore.InfoLevel)
	env := s.Open(t, testContext(t), testscene.Wiring{Now: s.clock.Now, Log: zap.New(core)})
	driftOnly := jobs.Options{Jobs: []string{jobs.JobDrift}}
	run := func() {
		t.Helper()
		logs.TakeAll()
		if err := env.Runner.Run(testContext(t), driftOnly); err != nil {
			t.Fatal(err)
		}
	}
	// KEB records a fourth instance on the busy binding, which has three
	// shoots: a count mismatch.
	s.insertInstance(t, "inst-extra", "ga-busy", busyBinding)
	isMismatch := func(e observer.LoggedEntry) bool {
		f := e.ContextMap()
		return f["binding"] == busyBinding && f["kind"] == string(hap.KindCountMismatch)
	}

	run()
	opened := logs.FilterMessage("drift finding opened").FilterLevelExact(zapcore.WarnLevel)
	mismatch := opened.Filter(isMismatch).All()
	if len(mismatch) != 1 {
		t.Fatalf("first run: %d warnings of the opened mismatch on %s, want 1; opened: %v", len(mismatch), busyBinding, opened.All())
	}
	f := mismatch[0].ContextMap()
	if f["globalAccount"] != "ga-busy" || f["dbCount"] != int64(4) || f["shootCount"] != int64(3) || f["detail"] == "" {
		t.Errorf("the opened mismatch logs %v, want GA ga-busy, KEB's count 4, Gardener's 3 and the cause", f)
	}
	openAfterFirst := summary(t, logs)["open"]

	// The same drift again: no line per finding, one line of counts.
	s.clock.Advance(10 * time.Minute)
	run()
	for _, msg := range []string{"drift finding opened", "drift finding resolved"} {
		if n := logs.FilterMessage(msg).Len(); n != 0 {
			t.Errorf("second run with the same drift: %d lines %q, want none", n, msg)
		}
	}
	if got := summary(t, logs); got["open"] != openAfterFirst || got["opened"] != int64(0) || got["resolved"] != int64(0) {
		t.Errorf("second run's counts %v, want %v open, none opened or resolved", got, openAfterFirst)
	}

	// KEB deletes the extra instance: the mismatch resolves, at info.
	s.exec(t, `UPDATE instances SET deleted_at = now() WHERE instance_id = 'inst-extra'`)
	s.clock.Advance(10 * time.Minute)
	run()
	resolved := logs.FilterMessage("drift finding resolved")
	if got := resolved.Filter(isMismatch).FilterLevelExact(zapcore.InfoLevel).Len(); got != 1 || resolved.Len() != 1 {
		t.Errorf("third run resolved %v, want the mismatch on %s alone, at info", resolved.All(), busyBinding)
	}
	if n := logs.FilterMessage("drift finding opened").Len(); n != 0 {
		t.Errorf("third run opened %d findings, want none", n)
	}
}

// summary returns the fields of the run's one line of counts.
func summary(t *testing.T, logs *observer.ObservedLogs) map[string]any {
	t.Helper()
	lines := logs.FilterMessage("drift recorded").All()
	if len(lines) != 1 {
		t.Fatalf("%d lines \"drift recorded\", want 1", len(lines))
	}
	return lines[0].ContextMap()
}
