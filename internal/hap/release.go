package hap

import (
	"fmt"
	"slices"
	"time"
)

// EmptySighting records since when a claimed binding has been seen empty,
// run after run. A sighting belongs to the GA that held the binding: a
// binding claimed again by another GA starts over.
type EmptySighting struct {
	GlobalAccountID string
	Since           time.Time
}

// ReleaseRules are the settings release decisions follow.
type ReleaseRules struct {
	GracePeriod time.Duration
	MaxPerRun   int
	// GuardRatio: when the assigned totals of the database and Gardener
	// differ by more than this share of the larger, the picture is suspect
	// and nothing is released.
	GuardRatio float64
}

// ReleasePlan is the outcome of DecideRelease.
type ReleasePlan struct {
	// Release are the bindings to give back now, oldest empty first, at most
	// MaxPerRun of them.
	Release []ReleaseDecision
	// Deferred were eligible but over MaxPerRun; the next run takes them.
	Deferred []ReleaseDecision
	// Sightings replace the stored ones.
	Sightings map[string]EmptySighting
	// GuardTripped explains why nothing is released, when the guard tripped.
	GuardTripped string
}

// Releasable reports whether a binding is of a kind that may ever be given
// back: one of a GA's bindings as KEB's dedicated selector reads them (in a
// pool, not shared, not dirty), with neither an internal nor a shared label
// of any value. KEB reads shared: "yes" as an ordinary binding and so does
// the ranking, but a release is the job's own act: a label that may have
// meant "shared" keeps the account where it is. A binding whose labels put
// it in no pool waits for an operator to mend them.
func Releasable(b Binding) bool {
	_, sharedLabel := b.Labels.Get(LabelShared)
	return b.Dedicated() && b.Claimed() && !b.Internal && !sharedLabel
}

// DecideRelease returns the bindings that may go back to the pool: releasable
// ones that nothing references on either side (whatever GA owns the
// reference) and that have been seen empty for the whole grace period. The
// snapshot must be complete; the caller never calls this on a partial one.
func DecideRelease(t *Tally, previous map[string]EmptySighting, rules ReleaseRules, now time.Time) ReleasePlan {
	plan := ReleasePlan{Sightings: map[string]EmptySighting{}}
	plan.GuardTripped = guard(t, rules.GuardRatio)
	var eligible []ReleaseDecision
	t.Each(func(u *Usage) {
		b := u.Binding
		if b == nil || !Releasable(*b) || !u.Empty() {
			return // a non-empty sighting resets the clock by leaving no entry
		}
		s, seen := previous[b.Name]
		if !seen || s.GlobalAccountID != b.GlobalAccountID {
			if plan.GuardTripped != "" {
				return // a suspect picture starts no clock
			}
			s = EmptySighting{GlobalAccountID: b.GlobalAccountID, Since: now}
		}
		plan.Sightings[b.Name] = s
		if now.Sub(s.Since) >= rules.GracePeriod {
			eligible = append(eligible, ReleaseDecision{
				Binding:    *b,
				EmptySince: s.Since,
				Reason: fmt.Sprintf("no shoot and no active instance since %s (grace period %s)",
					s.Since.UTC().Format(time.RFC3339), rules.GracePeriod),
			})
		}
	})
	if plan.GuardTripped != "" {
		plan.Deferred = eligible
		return plan
	}
	slices.SortStableFunc(eligible, func(a, b ReleaseDecision) int { return a.EmptySince.Compare(b.EmptySince) })
	n := min(len(eligible), max(rules.MaxPerRun, 0))
	plan.Release, plan.Deferred = eligible[:n], eligible[n:]
	return plan
}

// guard returns why the picture looks too wrong to release anything on, or
// "" when it looks sound. A database that answers "no clusters" while
// Gardener holds shoots is the classic symptom of reading the wrong database
// or schema; releasing on it would hand live accounts away.
func guard(t *Tally, ratio float64) string {
	db, shoots := t.InstancesTotal, t.ShootsTotal
	if db == 0 && shoots > 0 {
		return fmt.Sprintf("database reports no active instances while Gardener holds %d shoot(s)", shoots)
	}
	larger := max(db, shoots)
	if larger == 0 || ratio <= 0 {
		return ""
	}
	diff := db - shoots
	if diff < 0 {
		diff = -diff
	}
	if float64(diff) > ratio*float64(larger) {
		return fmt.Sprintf("database reports %d active instance(s) and Gardener %d shoot(s): they differ by more than %.0f%%", db, shoots, ratio*100)
	}
	return ""
}
