package jobs

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/setting"
	"github.com/kyma-project/hap-reconciler/provisioning"
)

// JobShadow names the shadow job.
const JobShadow = "shadow"

// shadowJob is the shadow job; its settings are the section shadow
// (Setup.Shadow).
var shadowJob = Job{
	Name:            JobShadow,
	Does:            "puts each of KEB's own picks beside what that table would have answered",
	DefaultSchedule: "*/10 * * * *",
	build: func(s Setup, p Ports, pass Pass) task {
		return &shadow{Pass: pass, settings: s.Shadow, store: p.Store, metrics: p.Metrics}
	},
}

// ShadowSettings are the shadow job's settings, the section shadow of the
// configuration file: KEB's own picks compared with the candidate table's.
type ShadowSettings struct {
	// Window is how far back picks are compared, kept and reported.
	Window setting.Duration `json:"window"`
	// MaxAge is the MaxAge KEB passes to provisioning.NextBinding: a pick
	// made while the table was older counts as staleness, not as a
	// difference, since NextBinding would have refused and KEB chosen.
	MaxAge setting.Duration `json:"maxAge"`
}

func defaultShadowSettings() ShadowSettings {
	return ShadowSettings{Window: setting.Duration{Duration: 7 * 24 * time.Hour}, MaxAge: setting.Duration{Duration: provisioning.DefaultMaxAge}}
}

func (s ShadowSettings) check() error {
	if err := setting.Positive("shadow.window", s.Window); err != nil {
		return err
	}
	return setting.Positive("shadow.maxAge", s.MaxAge)
}

// shadowStore is what the shadow job needs of the database: KEB's picks,
// the candidate table's history and the compared picks.
type shadowStore interface {
	// ShadowInputs returns KEB's placed instances since `since` (those in
	// the maxAge before it marked compared) and the candidate table's
	// rewrites over that time.
	ShadowInputs(ctx context.Context, since time.Time, maxAge time.Duration) (hap.ShadowInput, error)
	// CandidateVersions returns the candidate table's rows of groups as
	// they stood from `from` on.
	CandidateVersions(ctx context.Context, from time.Time, groups []hap.ShadowGroup) ([]hap.CandidateVersion, error)
	// RecordShadow keeps each compared pick once and prunes what is older
	// than retention.
	RecordShadow(ctx context.Context, results []hap.ShadowResult, retention, maxAge time.Duration) error
	// ShadowPicks returns the picks compared since `since`.
	ShadowPicks(ctx context.Context, since time.Time) ([]hap.ShadowResult, error)
}

// shadowMetrics is what the shadow job reports: the compared picks per
// outcome.
type shadowMetrics interface {
	SetShadow(tally map[string]int)
}

// shadow compares every instance KEB placed since its last run with what
// the candidate table would have answered at that moment, and keeps the
// verdicts: the evidence that KEB can read the table instead of choosing
// live, gathered while it still chooses live.
type shadow struct {
	Pass
	settings ShadowSettings
	store    shadowStore
	metrics  shadowMetrics
}

func (sh *shadow) Run(ctx context.Context, f *Facts) error {
	s := sh.settings
	// Gather: KEB's picks in the window, the snapshot's bindings saying
	// which pool each came from, and the table's history of the groups
	// with a pick to compare (none in a quiet window).
	since := f.SnapshotAt.Add(-s.Window.Duration)
	g, err := sh.gather(ctx, f, since)
	if err != nil {
		return err
	}

	// Decide.
	results := hap.CompareShadow(g.picks, g.versions, g.in.Rewrites, s.MaxAge.Duration)
	sh.decided()

	// Act.
	if sh.DryRun.WritesNothing() {
		sh.Log.Info("dry run: KEB's picks compared, nothing recorded", zap.Int("new", len(results)), zap.Int("unplaced", g.unplaced))
		return nil
	}
	tally, err := sh.record(ctx, results, since)
	if err != nil {
		return err
	}
	sh.logDifferences(results)
	sh.Log.Info("KEB's picks compared with the candidate table", zap.Int("new", len(results)),
		zap.Int("inWindow", tally.Picks()), zap.Int("agree", tally[hap.ShadowAgree]), zap.Int("unplaced", g.unplaced),
		zap.Bool("kebEventsReadable", g.in.EventsReadable), zap.Int("timedByResolveStep", timedByResolveStep(g.in.Placed)))
	return nil
}

// shadowGathered is what the shadow job compares: KEB's placed instances
// and the table's rewrites since the window began, KEB's picks with the
// pool each came from (unplaced: those whose binding the snapshot lacks),
// and the table's rows of the groups picked in.
type shadowGathered struct {
	in       hap.ShadowInput
	picks    []hap.KEBPick
	unplaced int
	versions []hap.CandidateVersion
}

func (sh *shadow) gather(ctx context.Context, f *Facts, since time.Time) (shadowGathered, error) {
	var g shadowGathered
	var err error
	if g.in, err = sh.store.ShadowInputs(ctx, since, sh.settings.MaxAge.Duration); err != nil {
		return g, err
	}
	g.picks, g.unplaced = hap.KEBPicksOf(g.in.Placed, f.Bindings)
	if groups := hap.GroupsToCompare(g.picks); len(groups) > 0 && len(g.in.Rewrites) > 0 {
		if g.versions, err = sh.store.CandidateVersions(ctx, g.in.Rewrites[0].WrittenAt, groups); err != nil {
			return g, err
		}
	}
	return g, nil
}

// record keeps the new verdicts and reports every pick compared since the
// window began, by outcome.
func (sh *shadow) record(ctx context.Context, results []hap.ShadowResult, since time.Time) (hap.ShadowTally, error) {
	if err := sh.store.RecordShadow(ctx, results, sh.settings.Window.Duration, sh.settings.MaxAge.Duration); err != nil {
		return nil, err
	}
	compared, err := sh.store.ShadowPicks(ctx, since)
	if err != nil {
		return nil, fmt.Errorf("counting the compared picks: %w", err)
	}
	tally := hap.ShadowTally{}
	for _, r := range compared {
		tally[r.Outcome]++
	}
	sh.metrics.SetShadow(tally)
	return tally, nil
}

// logDifferences logs each new pick on which KEB and the table differ.
func (sh *shadow) logDifferences(results []hap.ShadowResult) {
	for _, r := range results {
		if r.Outcome != hap.ShadowAgree {
			sh.Log.Info("KEB's pick differs from the candidate table's", zap.String("instance", r.InstanceID),
				zap.String("globalAccount", r.GlobalAccountID), zap.String("pool", r.Pool.String()), zap.String("keb", r.KEBBinding),
				zap.String("table", r.Table), zap.String("outcome", r.Outcome), zap.String("detail", r.Detail))
		}
	}
}

// timedByResolveStep counts the instances not compared yet whose pick is
// timed by KEB's resolve-step event.
func timedByResolveStep(placed []hap.PlacedInstance) int {
	n := 0
	for _, p := range placed {
		if !p.Compared && p.ByResolveStep {
			n++
		}
	}
	return n
}
