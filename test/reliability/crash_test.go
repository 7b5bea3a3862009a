package reliability

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// crashConfig releases a few empty bindings per run, so most runs have
// releases to be killed in.
const crashConfig = `
hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    limits: {default: 4, aws: 6}
release: {gracePeriod: 0s, maxPerRun: 3, guardRatio: 1}
`

// killMarkers are log messages right after which a kill is interesting:
// after gathering, after the table's commit, between a label update and its
// audit row, after a job. A trial without a marker kills after a random
// delay instead.
var killMarkers = []string{"gathered the fleet", "candidate table rewritten", "released binding", "job done"}

// A run killed with SIGKILL at any point leaves the candidate table whole
// (the old one or the new one), and the next run succeeds and brings label
// changes and the release history back into agreement.
func TestKilledRunsLeaveNothingHalfDone(t *testing.T) {
	testbed.Require(t)
	first := firstSeed(t)
	l := landscape.Generate(landscape.Options{Seed: 51, GlobalAccounts: 3})
	for i := range 8 {
		l.AddBinding(landscape.BindingSpec{Name: fmt.Sprintf("crash-%02d", i), Pool: awsPool, GlobalAccountID: goodGA})
	}
	s := newScene(t, l, crashConfig)
	initial := s.bindingLabels(t)
	var toggled []string // instances whose deletion the trials flip
	for _, i := range l.Instances {
		if i.Active() && i.SubscriptionSecretName != "" && len(toggled) < 4 {
			toggled = append(toggled, i.InstanceID)
		}
	}
	started := time.Now()
	s.mustRunBinary(t)
	typical := time.Since(started)
	// One in-process job for the test's own reads and repairs, so the
	// trials do not pile up connections.
	env := s.open(t, time.Now)
	s.restoreClaims(t, env, initial)

	stats := map[string]int{}
	for trial := range *crashTrials {
		seed := first + uint64(trial)
		rng := rand.New(rand.NewPCG(seed, 11))
		s.exec(t, `UPDATE instances SET deleted_at = CASE WHEN deleted_at = '0001-01-01 00:00:00+00' THEN now()
			ELSE '0001-01-01 00:00:00+00' END WHERE instance_id = $1`, toggled[rng.IntN(len(toggled))])
		previous := s.candidates(t)
		next := nextCandidates(t, env)
		watermark := s.auditLength(t)

		marker := ""
		if i := rng.IntN(len(killMarkers) + 2); i < len(killMarkers) {
			marker = killMarkers[i]
		}
		delay := time.Duration(rng.Int64N(int64(typical) * 3 / 2))
		outcome := s.runAndKill(t, marker, delay)
		stats[outcome]++

		got := s.candidates(t)
		switch {
		case slices.Equal(got, previous):
			stats["old table"]++
		case sameRewrite(got, next):
			stats["new table"]++
		default:
			t.Fatalf("seed %d (kill %s): the candidate table is neither the old nor the new one:\n got %v\n old %v\n new %v",
				seed, outcome, got, previous, next)
		}

		s.mustRunBinary(t)
		s.checkHistoryAgrees(t, env, seed, outcome, initial, watermark)
		s.restoreClaims(t, env, initial)
	}
	t.Logf("%d kills: %v", *crashTrials, stats)
}

// runAndKill starts `run` and kills it with SIGKILL right after marker is
// logged, or after delay without a marker; it says where the kill landed.
func (s *scene) runAndKill(t *testing.T, marker string, delay time.Duration) string {
	t.Helper()
	cmd, _ := s.command(testContext(t), "run")
	// The run logs on stdout.
	cmd.Stdout, cmd.Stderr = nil, io.Discard
	logs, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() { _ = cmd.Process.Signal(syscall.SIGKILL) }
	where := "after the run ended"
	if marker == "" {
		timer := time.AfterFunc(delay, kill)
		defer timer.Stop()
		where = fmt.Sprintf("after %s", delay.Round(time.Millisecond))
	}
	lines := bufio.NewScanner(logs)
	for lines.Scan() {
		if marker != "" && strings.Contains(lines.Text(), `"msg":"`+marker) {
			kill()
			where = "after " + marker
			break
		}
	}
	_, _ = io.Copy(io.Discard, logs)
	_ = cmd.Wait()
	if !cmd.ProcessState.Success() && marker == "" {
		return where
	}
	if cmd.ProcessState.Success() {
		return "after the run ended"
	}
	return where
}

func (s *scene) mustRunBinary(t *testing.T) {
	t.Helper()
	s.waitForRunLockFree(t)
	cmd, out := s.command(testContext(t), "run")
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("run after a kill: exit %d\n%s", code, out)
	}
}

// nextCandidates is the table a run would write now, as the job's own
// gathering and ranking compute it.
func nextCandidates(t *testing.T, env *app.Env) []candidateRow {
	t.Helper()
	facts, err := env.Runner.Gather(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []candidateRow
	for _, c := range facts.Candidates() {
		out = append(out, candidateRow{Binding: c.BindingName, GA: c.GlobalAccountID, Selectable: c.Selectable, Rank: c.Rank, Effective: c.EffectiveCount})
	}
	slices.SortFunc(out, func(a, b candidateRow) int { return strings.Compare(a.Binding, b.Binding) })
	return out
}

// sameRewrite: got is next as one rewrite wrote it, all rows of one
// computation; a binding the killed run retired before releasing it may
// be no longer selectable.
func sameRewrite(got, next []candidateRow) bool {
	if len(got) != len(next) || len(got) == 0 {
		return false
	}
	for i := range got {
		g, n := got[i], next[i]
		if !g.ComputedAt.Equal(got[0].ComputedAt) || g.Binding != n.Binding || g.GA != n.GA || g.Rank != n.Rank || g.Effective != n.Effective {
			return false
		}
		if g.Selectable != n.Selectable && (!n.Selectable || g.Selectable) {
			return false
		}
	}
	return true
}

// auditLength is how many rows the release history holds: the history
// only grows, so the rows after it are the ones written since.
func (s *scene) auditLength(t *testing.T) int {
	t.Helper()
	return len(s.releaseHistory(t))
}

// checkHistoryAgrees: after the kill and one complete run, every binding
// the trial released carries exactly one "released" row, no other binding
// carries one, and no intent is left unsettled.
func (s *scene) checkHistoryAgrees(t *testing.T, env *app.Env, seed uint64, where string, initial map[string]map[string]string, watermark int) {
	t.Helper()
	released := map[string]int{}
	for _, r := range s.releaseHistory(t)[watermark:] {
		if r.Outcome == hap.OutcomeReleased {
			released[r.BindingName]++
		}
	}
	for name, labels := range s.bindingLabels(t) {
		changed := labels[hap.LabelDirty] == "true" && initial[name][hap.LabelDirty] != "true"
		if changed != (released[name] == 1) || released[name] > 1 {
			t.Errorf("seed %d (killed %s): binding %s: labels %v, %d released row(s) in the history", seed, where, name, labels, released[name])
		}
	}
	if open, err := env.Store.OpenReleaseIntents(testContext(t)); err != nil || len(open) != 0 {
		t.Errorf("seed %d: unsettled release intents after a complete run: %v, %v", seed, open, err)
	}
}

// restoreClaims undoes the trial's releases, as the account cleanup and
// new claims would, so the next trial has bindings to release again.
func (s *scene) restoreClaims(t *testing.T, env *app.Env, initial map[string]map[string]string) {
	t.Helper()
	for name, labels := range s.bindingLabels(t) {
		if maps.Equal(labels, initial[name]) {
			continue
		}
		b, err := s.Bindings.Get(testContext(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b.SetLabels(initial[name])
		if _, err := s.Bindings.Update(testContext(t), b, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitForRunLockFree polls until no session holds an advisory lock in the
// scene's database: PostgreSQL frees a killed run's lock once it notices
// the connection is gone, and a run started before that would find the
// lock held and do nothing.
func (s *scene) waitForRunLockFree(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testContext(t), time.Minute)
	defer cancel()
	for {
		var held int
		err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&held)
		if err != nil {
			t.Fatal(err)
		}
		if held == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the killed run's lock was never freed")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
