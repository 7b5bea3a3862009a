package jobstest

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Store is an in-memory jobs.Store: KEB's instance counts as the test sets
// them, and the job's own tables as plain values.
type Store struct {
	mu sync.Mutex

	// Instances are what ReadInstanceCounts returns.
	Instances []hap.InstanceCount
	// Reserved counts the reservations on each binding that KEB's table
	// does not show yet; InUse and RetireCandidate count them.
	Reserved map[string]int
	// Fail makes the named method (such as "ReplaceCandidates") fail with
	// its error, changing nothing.
	Fail map[string]error
	// Clock is the database's clock; nil is time.Now.
	Clock func() time.Time
	// Pruned is what each run's retention step was asked to keep, in
	// order.
	Pruned []hap.Retention

	findings   map[findingKey]hap.OpenFinding
	candidates []hap.Candidate
	computedAt time.Time
	empty      map[string]hap.EmptySighting
	releases   []hap.ReleaseRecord
	history    map[hap.Pool][]hap.PoolSample
	// withdrawn holds the withdrawals and when each was made.
	withdrawn map[string]time.Time
	// Shadow is what ShadowInputs returns, and Versions what
	// CandidateVersions filters; shadow the recorded results.
	Shadow   hap.ShadowInput
	Versions []hap.CandidateVersion
	shadow   map[string]hap.ShadowResult
}

type findingKey struct {
	binding, ga string
	kind        hap.FindingKind
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{Reserved: map[string]int{}, Fail: map[string]error{}, findings: map[findingKey]hap.OpenFinding{},
		empty: map[string]hap.EmptySighting{}, history: map[hap.Pool][]hap.PoolSample{}, withdrawn: map[string]time.Time{},
		shadow: map[string]hap.ShadowResult{}}
}

func (s *Store) fail(method string) error { return s.Fail[method] }

func (s *Store) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

func (s *Store) DatabaseTime(context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("DatabaseTime"); err != nil {
		return time.Time{}, err
	}
	return s.now(), nil
}

// Withdraw is KEB's free step withdrawing a binding from the picks at a
// time of the database's clock.
func (s *Store) Withdraw(binding string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.withdrawn[binding] = at
}

// Withdrawn names the bindings withdrawn from the picks, sorted.
func (s *Store) Withdrawn() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.withdrawn))
}

func (s *Store) EndWithdrawals(_ context.Context, takenAt time.Time, dirty []string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("EndWithdrawals"); err != nil {
		return 0, err
	}
	ended := 0
	for name, at := range s.withdrawn {
		if at.Before(takenAt) && !slices.Contains(dirty, name) {
			delete(s.withdrawn, name)
			ended++
		}
	}
	return ended, nil
}

func (s *Store) ReadInstanceCounts(context.Context) (hap.InstanceRead, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("ReadInstanceCounts"); err != nil {
		return hap.InstanceRead{}, err
	}
	return hap.InstanceRead{Counts: slices.Clone(s.Instances)}, nil
}

// RecordFindings opens new findings, keeps the first-seen time of those
// still open and resolves those this run did not produce.
func (s *Store) RecordFindings(_ context.Context, findings []hap.Finding, now time.Time) (hap.DriftChanges, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("RecordFindings"); err != nil {
		return hap.DriftChanges{}, err
	}
	var changes hap.DriftChanges
	current := map[findingKey]hap.OpenFinding{}
	for _, f := range findings {
		k := findingKey{f.BindingName, f.GlobalAccountID, f.Kind}
		first := now
		if old, ok := s.findings[k]; ok {
			first = old.FirstSeen
		} else {
			changes.Opened = append(changes.Opened, f)
		}
		current[k] = hap.OpenFinding{Finding: f, FirstSeen: first, LastSeen: now}
	}
	for k, old := range s.findings {
		if _, ok := current[k]; !ok {
			changes.Resolved = append(changes.Resolved, old)
		}
	}
	s.findings = current
	return changes, nil
}

// OpenFindings returns the open findings about ga (hap.AllGlobalAccounts:
// every one), by binding and kind.
func (s *Store) OpenFindings(_ context.Context, ga string) ([]hap.OpenFinding, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("OpenFindings"); err != nil {
		return nil, err
	}
	var out []hap.OpenFinding
	for _, f := range s.findings {
		if ga == hap.AllGlobalAccounts || f.GlobalAccountID == ga {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b hap.OpenFinding) int {
		return cmp.Or(cmp.Compare(a.BindingName, b.BindingName), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.GlobalAccountID, b.GlobalAccountID))
	})
	return out, nil
}

// ReplaceCandidates keeps rows as the table; reservations are not modelled
// beyond Reserved.
func (s *Store) ReplaceCandidates(_ context.Context, rows []hap.Candidate, _ []string, computedAt time.Time, _ time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("ReplaceCandidates"); err != nil {
		return err
	}
	s.candidates, s.computedAt = slices.Clone(rows), computedAt
	return nil
}

// Candidates returns the candidate table and when it was computed.
func (s *Store) Candidates() ([]hap.Candidate, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.candidates), s.computedAt
}

func (s *Store) EmptySince(context.Context) (map[string]hap.EmptySighting, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("EmptySince"); err != nil {
		return nil, err
	}
	return maps.Clone(s.empty), nil
}

// SaveEmptySince replaces the whole set.
func (s *Store) SaveEmptySince(_ context.Context, sightings map[string]hap.EmptySighting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("SaveEmptySince"); err != nil {
		return err
	}
	s.empty = maps.Clone(sightings)
	return nil
}

// RetireCandidate withdraws the binding's candidate rows unless something
// uses it, and returns that use.
func (s *Store) RetireCandidate(_ context.Context, binding string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("RetireCandidate"); err != nil {
		return 0, err
	}
	n := s.inUseLocked(binding)
	if n == 0 {
		s.candidates = slices.DeleteFunc(s.candidates, func(c hap.Candidate) bool { return c.BindingName == binding })
		s.withdrawn[binding] = s.now()
	}
	return n, nil
}

func (s *Store) InUse(_ context.Context, binding string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("InUse"); err != nil {
		return 0, err
	}
	return s.inUseLocked(binding), nil
}

func (s *Store) inUseLocked(binding string) int {
	n := s.Reserved[binding]
	for _, c := range s.Instances {
		if c.BindingName == binding {
			n += c.Active
		}
	}
	return n
}

// RecordRelease appends r, numbered, unless it settles an intent already
// settled; the fake keeps no clock of its own.
func (s *Store) RecordRelease(_ context.Context, r hap.ReleaseRecord) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("RecordRelease"); err != nil {
		return 0, err
	}
	if r.IntentID != 0 && slices.ContainsFunc(s.releases, func(x hap.ReleaseRecord) bool { return x.IntentID == r.IntentID }) {
		return 0, nil // settled already, as the real store's unique index has it
	}
	r.ID = int64(len(s.releases) + 1)
	s.releases = append(s.releases, r)
	return r.ID, nil
}

// Releases returns the release history in the order it was written.
func (s *Store) Releases() []hap.ReleaseRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.releases)
}

// OpenReleaseIntents returns the intents no outcome row names.
func (s *Store) OpenReleaseIntents(context.Context) ([]hap.OpenIntent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("OpenReleaseIntents"); err != nil {
		return nil, err
	}
	settled := map[int64]bool{}
	for _, r := range s.releases {
		settled[r.IntentID] = true
	}
	var out []hap.OpenIntent
	for _, r := range s.releases {
		if r.Outcome == hap.OutcomeIntent && !settled[r.ID] {
			out = append(out, hap.OpenIntent{ReleaseRecord: r})
		}
	}
	return out, nil
}

// RecordPoolSamples appends the dedicated pools' sample at at, replacing one
// taken at the same time.
func (s *Store) RecordPoolSamples(_ context.Context, at time.Time, stats []hap.PoolStats) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("RecordPoolSamples"); err != nil {
		return err
	}
	for _, p := range stats {
		if p.Shared {
			continue
		}
		pool := hap.Pool{HyperscalerType: p.HyperscalerType, EUAccess: p.EUAccess}
		samples := slices.DeleteFunc(s.history[pool], func(x hap.PoolSample) bool { return x.At.Equal(at) })
		s.history[pool] = append(samples, hap.PoolSample{At: at, Free: p.Free, Claimed: p.Claimed})
	}
	return nil
}

// PoolHistory returns the samples since, per pool, oldest first.
func (s *Store) PoolHistory(_ context.Context, since time.Time) (map[hap.Pool][]hap.PoolSample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("PoolHistory"); err != nil {
		return nil, err
	}
	out := map[hap.Pool][]hap.PoolSample{}
	for pool, samples := range s.history {
		for _, x := range samples {
			if !x.At.Before(since) {
				out[pool] = append(out[pool], x)
			}
		}
		slices.SortFunc(out[pool], func(a, b hap.PoolSample) int { return a.At.Compare(b.At) })
	}
	return out, nil
}

// ShadowInputs returns Shadow, with the picks already recorded marked
// compared.
func (s *Store) ShadowInputs(context.Context, time.Time, time.Duration) (hap.ShadowInput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("ShadowInputs"); err != nil {
		return hap.ShadowInput{}, err
	}
	in := s.Shadow
	in.Placed = slices.Clone(in.Placed)
	for i, p := range in.Placed {
		_, in.Placed[i].Compared = s.shadow[p.InstanceID]
	}
	return in, nil
}

// CandidateVersions returns the Versions of groups held at or after from.
func (s *Store) CandidateVersions(_ context.Context, from time.Time, groups []hap.ShadowGroup) ([]hap.CandidateVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("CandidateVersions"); err != nil {
		return nil, err
	}
	var out []hap.CandidateVersion
	for _, v := range s.Versions {
		if (v.ValidTo.IsZero() || v.ValidTo.After(from)) && slices.Contains(groups, hap.ShadowGroup{GlobalAccountID: v.GlobalAccountID, Pool: v.Pool}) {
			out = append(out, v)
		}
	}
	return out, nil
}

func (s *Store) RecordShadow(_ context.Context, results []hap.ShadowResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("RecordShadow"); err != nil {
		return err
	}
	for _, r := range results {
		if _, ok := s.shadow[r.InstanceID]; !ok {
			s.shadow[r.InstanceID] = r
		}
	}
	return nil
}

func (s *Store) ShadowPicks(_ context.Context, since time.Time) ([]hap.ShadowResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []hap.ShadowResult
	for _, r := range s.shadow {
		if !r.At.Before(since) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b hap.ShadowResult) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.InstanceID, b.InstanceID))
	})
	return out, nil
}

// PruneTables records what the run's retention step kept: the fake keeps
// no resolved finding, audit past its run or history to forget.
func (s *Store) PruneTables(_ context.Context, keep hap.Retention) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("PruneTables"); err != nil {
		return err
	}
	s.Pruned = append(s.Pruned, keep)
	return nil
}

// TableRows counts the rows the fake keeps, by the table that would hold
// them.
func (s *Store) TableRows(context.Context) (map[string]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("TableRows"); err != nil {
		return nil, err
	}
	return map[string]int64{"binding_drift": int64(len(s.findings)), "binding_candidates": int64(len(s.candidates)),
		"binding_empty_since": int64(len(s.empty)), "binding_releases": int64(len(s.releases)),
		"withdrawn_bindings": int64(len(s.withdrawn)), "shadow_picks": int64(len(s.shadow))}, nil
}
