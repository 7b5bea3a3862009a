package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/setting"
)

// JobRelease names the release job.
const JobRelease = "release"

// releaseJob is the release job; its settings are the section release
// (Setup.Release).
var releaseJob = Job{
	Name:            JobRelease,
	Does:            "gives bindings that hold nothing back to the pool",
	DefaultSchedule: "15 * * * *",
	build: func(s Setup, p Ports, pass Pass) task {
		return &release{Pass: pass, settings: s.Release, gardener: p.Gardener, store: p.Store, metrics: p.Metrics, now: p.Now}
	},
}

// ReleaseSettings are the release job's settings, the section release of
// the configuration file.
type ReleaseSettings struct {
	Enabled     bool             `json:"enabled"`
	Mode        string           `json:"mode"`
	GracePeriod setting.Duration `json:"gracePeriod"`
	MaxPerRun   int              `json:"maxPerRun"`
	GuardRatio  float64          `json:"guardRatio"`
}

// ReleaseDirty is the only release mode: it labels the binding `dirty: "true"`
// and keeps `tenantName`, handing the account to the account-cleanup
// process, as KEB does when it frees a binding.
const ReleaseDirty = "dirty"

func defaultReleaseSettings() ReleaseSettings {
	return ReleaseSettings{
		Enabled:     true,
		Mode:        ReleaseDirty,
		GracePeriod: setting.Duration{Duration: time.Hour},
		MaxPerRun:   10,
		GuardRatio:  0.5,
	}
}

func (s ReleaseSettings) check() error {
	switch s.Mode {
	case ReleaseDirty:
	case "unclaim":
		return setting.Invalid("release.mode", s.Mode, "is no longer supported: it handed an account nobody had cleaned to the next tenant; "+
			"use %q, the only mode, as KEB does when it frees a binding", ReleaseDirty)
	default:
		return setting.Invalid("release.mode", s.Mode, "must be %q", ReleaseDirty)
	}
	if s.GracePeriod.Duration < 0 {
		return setting.Invalid("release.gracePeriod", s.GracePeriod.String(), "must not be negative")
	}
	if s.MaxPerRun < 0 {
		return setting.Invalid("release.maxPerRun", s.MaxPerRun, "must not be negative")
	}
	if s.GuardRatio < 0 || s.GuardRatio > 1 {
		return setting.Invalid("release.guardRatio", s.GuardRatio, "must be between 0 and 1")
	}
	return nil
}

// Rules returns the decisions' view of the release settings.
func (s ReleaseSettings) Rules() hap.ReleaseRules {
	return hap.ReleaseRules{
		GracePeriod: s.GracePeriod.Duration,
		MaxPerRun:   s.MaxPerRun,
		GuardRatio:  s.GuardRatio,
	}
}

// releaseGardener is what the release needs of the Gardener API beyond the
// snapshot: the live binding, a live look at the shoots, and the guarded
// writes.
type releaseGardener interface {
	// ListShootsLive is the shoot list asked of the API server itself, even
	// where the snapshot's lists answer from a watch cache: the release's
	// last look before it acts must not trail a shoot created a moment ago.
	// onReset is called, and every shoot delivered again, when the list had
	// to start over.
	ListShootsLive(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error
	// GetBinding reads one binding; when it does not exist, the error is
	// one for which IsNotFound is true.
	GetBinding(ctx context.Context, name string) (hap.Binding, error)
	// MarkReleased adds dirty: "true" and the release annotation naming
	// releaseID (hap.AnnotationRelease) in one write, if the binding still
	// has resourceVersion; otherwise it fails with an error for which
	// IsConflict is true.
	MarkReleased(ctx context.Context, name, resourceVersion, releaseID string) error
	// VoidRelease sets the voided-release annotation naming releaseID, if
	// the binding is still at resourceVersion (else IsConflict): the
	// release's own update, guarded by the same version, can then never
	// land.
	VoidRelease(ctx context.Context, name, resourceVersion, releaseID string) error
	IsConflict(err error) bool
	IsNotFound(err error) bool
	// IsRefused reports whether a write's error is a definite refusal (a
	// conflict, not found, forbidden, invalid): the write did not land. After
	// any other error it is unknown whether it landed.
	IsRefused(err error) bool
}

// releaseStore is what the release needs of the database: the empty-since
// clocks, the candidate rows it retires and the release history.
type releaseStore interface {
	EmptySince(ctx context.Context) (map[string]hap.EmptySighting, error)
	SaveEmptySince(ctx context.Context, sightings map[string]hap.EmptySighting) error
	// RetireCandidate withdraws the binding from the picks provisioning makes
	// unless an active instance or a reservation uses it, and returns that
	// use. It holds the candidate row's lock while counting, so no pick can
	// slip in between.
	RetireCandidate(ctx context.Context, binding string) (inUse int, err error)
	// InUse counts the active instances and reservations on the binding,
	// changing nothing: the dry-run twin of RetireCandidate.
	InUse(ctx context.Context, binding string) (int, error)
	// RecordRelease appends r to the release history, stamped with the
	// database's time, and returns the row's ID.
	RecordRelease(ctx context.Context, r hap.ReleaseRecord) (int64, error)
	// OpenReleaseIntents returns the release intents no outcome row settles
	// yet (see release_audit.go).
	OpenReleaseIntents(ctx context.Context) ([]hap.OpenIntent, error)
}

// releaseMetrics is what the release reports: each outcome and each time
// its guard trips.
type releaseMetrics interface {
	Release(mode, outcome string)
	GuardTripped()
}

// release is one run of the release job, with its settings and ports.
type release struct {
	Pass
	settings ReleaseSettings
	gardener releaseGardener
	store    releaseStore
	metrics  releaseMetrics
	now      func() time.Time
}

// release gives bindings that have held nothing for the whole grace period
// back to the pool. A wrong release hands a customer's live account to
// somebody else, so every binding is checked again against the live state
// right before its label changes, and the change itself only lands if the
// binding is exactly as that check saw it.
func (r *release) Run(ctx context.Context, f *Facts) error {
	dryRun := r.DryRun.ChangesNoBinding()
	if !r.settings.Enabled {
		r.Log.Info("release is disabled (release.enabled: false)")
		return nil
	}
	if !dryRun {
		// A database restart during the gathering ends the lock's session
		// even when every read was repeated in time.
		if err := r.stillLocked(ctx); err != nil {
			return fmt.Errorf("nothing released: %w", err)
		}
		if err := r.settleReleaseIntents(ctx); err != nil {
			return err
		}
	}
	// Gather: since when each binding has been seen empty.
	previous, err := r.store.EmptySince(ctx)
	if err != nil {
		return fmt.Errorf("reading since when bindings have been empty: %w", err)
	}

	// Decide.
	plan := hap.DecideRelease(f.Tally, previous, r.settings.Rules(), r.now())
	if !r.DryRun.WritesNothing() {
		if err := r.store.SaveEmptySince(ctx, plan.Sightings); err != nil {
			return fmt.Errorf("saving since when bindings have been empty, nothing released: %w", err)
		}
	}
	if plan.GuardTripped != "" {
		if !r.DryRun.WritesNothing() {
			r.metrics.GuardTripped()
		}
		r.Log.Warn("release guard tripped, nothing is released in this run",
			zap.String("reason", plan.GuardTripped), zap.Int("eligible", len(plan.Deferred)))
		return nil
	}
	if len(plan.Deferred) > 0 {
		r.Log.Info("more bindings are eligible than release.maxPerRun allows; the next run takes them",
			zap.Int("maxPerRun", r.settings.MaxPerRun), zap.Int("deferred", len(plan.Deferred)))
	}
	r.decided()

	// Act.
	return r.releaseAll(ctx, plan.Release, dryRun)
}

// releaseAll re-checks each decision against the live state and releases
// what still qualifies: a fresh GET (same GA, same labels), a fresh database
// count that also withdraws the binding from the candidate table so no pick
// can land on it, one fresh look at the shoots, then an update guarded by the
// resourceVersion of that GET.
func (r *release) releaseAll(ctx context.Context, decisions []hap.ReleaseDecision, dryRun bool) error {
	if len(decisions) == 0 {
		return nil
	}
	var errs []error
	var ready []hap.ReleaseDecision
	for _, d := range decisions {
		live, skip, err := r.recheckBinding(ctx, d, dryRun)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if skip != "" {
			r.skipRelease(d, skip)
			continue
		}
		d.Binding = live
		ready = append(ready, d)
	}
	if len(ready) == 0 {
		return errors.Join(errs...)
	}
	shoots, err := r.shootsOn(ctx, ready)
	if err != nil {
		errs = append(errs, fmt.Errorf("fresh look at the shoots, nothing released: %w", err))
		for _, d := range ready {
			errs = append(errs, r.audit(ctx, d, dryRun, hap.OutcomeAborted))
		}
		return errors.Join(errs...)
	}
	for _, d := range ready {
		if n := shoots[d.Binding.Name]; n > 0 {
			r.skipRelease(d, fmt.Sprintf("%d shoot(s) reference it now", n))
			continue
		}
		if dryRun {
			r.Log.Info("would release binding", zap.String("binding", d.Binding.Name),
				zap.String("globalAccount", d.Binding.GlobalAccountID), zap.String("reason", d.Reason))
			errs = append(errs, r.audit(ctx, d, true, hap.OutcomeWouldRelease))
			continue
		}
		if err := r.stillLocked(ctx); err != nil {
			errs = append(errs, fmt.Errorf("releases stopped before binding %s, the next run takes them: %w", d.Binding.Name, err))
			break
		}
		errs = append(errs, r.releaseOne(ctx, d))
	}
	return errors.Join(errs...)
}

// recheckBinding returns the live binding, or why it no longer qualifies.
func (r *release) recheckBinding(ctx context.Context, d hap.ReleaseDecision, dryRun bool) (hap.Binding, string, error) {
	live, err := r.gardener.GetBinding(ctx, d.Binding.Name)
	if r.gardener.IsNotFound(err) {
		// Deleted since the snapshot: there is nothing left to give back.
		return live, "it no longer exists", nil
	}
	if errors.Is(err, hap.ErrUnreadableLabels) {
		return live, "its labels changed since the snapshot and can no longer be read: " + err.Error(), nil
	}
	if err != nil {
		return live, "", fmt.Errorf("re-reading binding %s: %w", d.Binding.Name, err)
	}
	if live.GlobalAccountID != d.Binding.GlobalAccountID || !hap.Releasable(live) || !live.Labels.Equal(d.Binding.Labels) {
		return live, "its labels changed since the snapshot", nil
	}
	count := r.store.RetireCandidate
	if dryRun {
		count = r.store.InUse
	}
	inUse, err := count(ctx, live.Name)
	if err != nil {
		return live, "", fmt.Errorf("re-counting instances on binding %s: %w", live.Name, err)
	}
	if inUse > 0 {
		return live, fmt.Sprintf("%d active instance(s) or reservation(s) use it now", inUse), nil
	}
	return live, "", nil
}

// shootsOn counts, in one fresh list, the shoots that reference each binding.
func (r *release) shootsOn(ctx context.Context, ds []hap.ReleaseDecision) (map[string]int, error) {
	counts := make(map[string]int, len(ds))
	for _, d := range ds {
		counts[d.Binding.Name] = 0
	}
	err := r.gardener.ListShootsLive(ctx, func() {
		for name := range counts {
			counts[name] = 0
		}
	}, func(s hap.Shoot) error {
		if _, watched := counts[s.BindingName]; watched {
			counts[s.BindingName]++
		}
		return nil
	})
	return counts, err
}

// releaseOne marks the binding released, guarded by the resourceVersion of
// the re-check. A conflict is no failure: the binding is simply not released
// this time. A release whose audit row is missing is one: the history must
// name every account that was given back. When the API server's answer is
// lost (a broken connection, a timeout, a 5xx), the update may have landed:
// the binding is read back at once (and the release voided when the binding
// cannot tell yet), and what came of it is recorded; when even that fails,
// the intent stays open for the next run to settle.
func (r *release) releaseOne(ctx context.Context, d hap.ReleaseDecision) error {
	b := d.Binding
	intent, err := r.recordIntent(ctx, d)
	if err != nil {
		return err
	}
	err = r.gardener.MarkReleased(ctx, b.Name, b.ResourceVersion, releaseID(intent.ID))
	switch {
	case err == nil:
		r.logReleased(d)
		return r.auditReleased(ctx, d, intent.ID)
	case r.gardener.IsConflict(err):
		r.Log.Warn("binding changed while being released; not released this time, the next run tries again",
			zap.String("binding", b.Name), zap.Error(err))
		return r.auditSettled(ctx, d, intent.ID, hap.OutcomeConflict)
	case r.gardener.IsRefused(err):
		return errors.Join(fmt.Errorf("releasing binding %s: %w", b.Name, err), r.auditSettled(ctx, d, intent.ID, hap.OutcomeAborted))
	}
	r.Log.Warn("the answer to a release was lost; reading the binding back", zap.String("binding", b.Name), zap.Error(err))
	outcome, settleErr := r.settleIntent(ctx, hap.OpenIntent{ReleaseRecord: intent})
	switch {
	case settleErr != nil:
		return fmt.Errorf("releasing binding %s: %w; the next run settles it: %w", b.Name, err, settleErr)
	case outcome == hap.OutcomeReleased:
		r.logReleased(d)
		return nil
	}
	return fmt.Errorf("releasing binding %s: %w", b.Name, err)
}

func (r *release) logReleased(d hap.ReleaseDecision) {
	r.Log.Info("released binding", zap.String("binding", d.Binding.Name), zap.String("globalAccount", d.Binding.GlobalAccountID),
		zap.String("mode", r.settings.Mode), zap.String("reason", d.Reason))
}

// auditReleased records a release that landed; a missing row fails the run.
func (r *release) auditReleased(ctx context.Context, d hap.ReleaseDecision, intentID int64) error {
	if err := r.auditSettled(ctx, d, intentID, hap.OutcomeReleased); err != nil {
		return fmt.Errorf("binding %s was released but the release is not recorded: %w", d.Binding.Name, err)
	}
	return nil
}

func (r *release) skipRelease(d hap.ReleaseDecision, why string) {
	r.Log.Info("binding no longer qualifies for release", zap.String("binding", d.Binding.Name), zap.String("why", why))
}

// audit counts the outcome of a decision no intent precedes (a dry run's,
// or one given up before its intent) and appends it to the release history.
func (r *release) audit(ctx context.Context, d hap.ReleaseDecision, dryRun bool, outcome string) error {
	return r.record(ctx, d, hap.ReleaseRecord{DryRun: dryRun, Outcome: outcome})
}

// auditSettled counts the outcome of the release intentID began and
// appends it, naming the intent, to the release history.
func (r *release) auditSettled(ctx context.Context, d hap.ReleaseDecision, intentID int64, outcome string) error {
	return r.record(ctx, d, hap.ReleaseRecord{Outcome: outcome, IntentID: intentID})
}

// record completes row with the decision and writes it; outcomes are
// counted, intents are not. A run that writes nothing (--dry-run) has
// logged its decision and neither counts nor records it.
func (r *release) record(ctx context.Context, d hap.ReleaseDecision, row hap.ReleaseRecord) error {
	if r.DryRun.WritesNothing() {
		return nil
	}
	row.BindingName, row.GlobalAccountID, row.Pool = d.Binding.Name, d.Binding.GlobalAccountID, d.Binding.Pool
	row.Mode, row.Reason = r.settings.Mode, d.Reason
	if row.Outcome != hap.OutcomeIntent {
		r.metrics.Release(r.settings.Mode, row.Outcome)
	}
	if _, err := r.store.RecordRelease(ctx, row); err != nil {
		return fmt.Errorf("writing the audit row (%s) of binding %s: %w", row.Outcome, d.Binding.Name, err)
	}
	return nil
}
