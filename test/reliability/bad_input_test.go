package reliability

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// releaseEverythingEmpty releases every empty claimed binding in the first
// run it is seen in, so a malformed binding read as valid would be gone.
const releaseEverythingEmpty = `
hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    limits: {default: 4, aws: 6}
gardener: {pageSize: 5}
release: {gracePeriod: 0s, maxPerRun: 100, guardRatio: 1}
`

const (
	goodGA = "ga-good"
	// Global account ids KEB's table may hold and label values never can.
	quotedGA = `ga'; DROP TABLE instances;--`
	spacedGA = `ga "quoted" with spaces`
	// A binding name only KEB's table holds, full of SQL.
	sqlBinding = `b'); DELETE FROM hap.binding_candidates;--`
)

var awsPool = hap.Pool{HyperscalerType: "aws"}

// plantMalformed adds objects a careless reader would trip over. It returns
// the names of the claimed, empty bindings with label values KEB never
// writes: no hyperscalerType and dirty "yes" put a binding in no pool KEB
// reads; shared "maybe" and internal "1" leave it one of the GA's bindings
// to KEB, but a release must never take such an account.
func plantMalformed(l *landscape.Landscape) (unreadable []string, longName string) {
	for name, labels := range map[string]map[string]string{
		"no-hyperscaler-type": {hap.LabelHyperscalerType: ""},
		"dirty-says-yes":      {hap.LabelDirty: "yes"},
		"shared-says-maybe":   {hap.LabelShared: "maybe"},
		"internal-says-1":     {hap.LabelInternal: "1"},
	} {
		l.AddBinding(landscape.BindingSpec{Name: name, Pool: awsPool, GlobalAccountID: goodGA, Labels: labels})
		unreadable = append(unreadable, name)
	}
	n := 0
	instance := func(ga, binding string) {
		n++
		at := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
		l.AddInstance(landscape.Instance{InstanceID: fmt.Sprintf("odd-%02d", n), RuntimeID: fmt.Sprintf("rt-odd-%02d", n),
			GlobalAccountID: ga, SubscriptionSecretName: binding, Provider: "AWS", ServicePlanName: "aws",
			ProvisioningParameters: "{}", CreatedAt: at, UpdatedAt: at})
	}
	// A provider nobody configured a limit for: the default applies.
	quantum := hap.Pool{HyperscalerType: "quantum_eu-1"}
	l.AddBinding(landscape.BindingSpec{Name: "quantum-0001", Pool: quantum, GlobalAccountID: goodGA})
	l.AddShoot(landscape.ShootSpec{BindingName: "quantum-0001", GlobalAccountID: goodGA, RuntimeID: "rt-odd-01", Pool: quantum})
	instance(goodGA, "quantum-0001")
	// The longest name Kubernetes allows, in use.
	longName = "l" + strings.Repeat("o", 251) + "g"
	l.AddBinding(landscape.BindingSpec{Name: longName, Pool: awsPool, GlobalAccountID: goodGA})
	instance(goodGA, longName)
	// Global account ids with quotes, spaces and SQL in KEB's table.
	l.AddBinding(landscape.BindingSpec{Name: "odd-tenants", Pool: awsPool, GlobalAccountID: goodGA})
	instance(quotedGA, "odd-tenants")
	instance(spacedGA, sqlBinding)
	// A shoot that names no binding at all.
	l.AddShoot(landscape.ShootSpec{GlobalAccountID: goodGA})
	// The control: a valid, claimed, empty binding, which must go.
	l.AddBinding(landscape.BindingSpec{Name: "control-empty", Pool: awsPool, GlobalAccountID: goodGA})
	return unreadable, longName
}

func TestOddObjectsAreReadAsKEBReadsThemCountedAndNeverReleased(t *testing.T) {
	testbed.Require(t)
	l := landscape.Generate(landscape.Options{Seed: 21, GlobalAccounts: 3})
	unreadable, longName := plantMalformed(l)
	s := newScene(t, l, releaseEverythingEmpty)
	before := s.bindingLabels(t)
	env := s.open(t, time.Now)

	if err := runAll(testContext(t), env); err != nil {
		t.Fatalf("a run over malformed objects failed for everybody: %v", err)
	}

	after := s.bindingLabels(t)
	audit := s.releaseOutcomes(t)
	if after["control-empty"][hap.LabelDirty] != "true" || audit["control-empty"][hap.OutcomeReleased] != 1 {
		t.Fatalf("the valid empty binding was not released (labels %v, audit %v): the test proves nothing", after["control-empty"], audit["control-empty"])
	}
	for _, name := range append(unreadable, "quantum-0001", longName, "odd-tenants") {
		if !maps.Equal(before[name], after[name]) {
			t.Errorf("binding %.40s changed: %v -> %v", name, before[name], after[name])
		}
		if len(audit[name]) != 0 {
			t.Errorf("binding %.40s has release audit rows %v", name, audit[name])
		}
	}

	// Every binding has a name, so none is skipped: the odd label values
	// are read as KEB reads them, and the two in no pool are findings.
	skipped := skippedGauge(t, env.Metrics)
	if skipped["CredentialsBinding"] != 0 || skipped["Shoot"] != 1 {
		t.Errorf("hap_reconciler_skipped_objects = %v, want no binding and 1 shoot", skipped)
	}
	open, err := env.Store.OpenFindings(testContext(t), hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	var inNoPool []string
	for _, f := range open {
		if f.Kind == hap.KindInNoPool {
			inNoPool = append(inNoPool, f.BindingName)
		}
	}
	slices.Sort(inNoPool)
	if !slices.Equal(inNoPool, []string{"dirty-says-yes", "no-hyperscaler-type"}) {
		t.Errorf("in_no_pool findings on %v, want dirty-says-yes and no-hyperscaler-type", inNoPool)
	}

	// Everybody else's candidate table is exactly what the landscape says,
	// the unusual but valid bindings included; the released binding was
	// withdrawn from the picks.
	want := wantCandidates(l, s.Config.Policy())
	for _, name := range []string{"quantum-0001", longName} {
		if _, ok := want[name]; !ok {
			t.Errorf("binding %.40s has no candidate row", name)
		}
	}
	checkCandidates(t, s.candidates(t), want, "control-empty")
	store := s.Store(t, testContext(t))
	stored, err := store.Candidates(testContext(t), hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(stored, func(c hap.StoredCandidate) bool { return c.BindingName == "quantum-0001" }); i < 0 || stored[i].Limit == nil || *stored[i].Limit != 4 {
		t.Errorf("limit of a provider without override: want the default 4 on quantum-0001's row (%d rows)", len(stored))
	}

	// The odd ids went through as data, never as SQL.
	for _, f := range []struct{ binding, ga string }{{"odd-tenants", quotedGA}, {sqlBinding, spacedGA}} {
		open, err := store.OpenFindings(testContext(t), f.ga)
		n := 0
		for _, o := range open {
			if o.BindingName == f.binding {
				n++
			}
		}
		if err != nil || n != 1 {
			t.Errorf("open findings of %q on %q: %d, %v; want 1", f.ga, f.binding, n, err)
		}
	}
	var instances int
	if err := s.db.QueryRowContext(testContext(t), `SELECT count(*) FROM instances`).Scan(&instances); err != nil || instances != len(l.Instances) {
		t.Errorf("instances: %d, %v; want %d untouched", instances, err, len(l.Instances))
	}

	// And the next run, now with the clocks of the first, still leaves them.
	if err := runAll(testContext(t), env); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if again := s.bindingLabels(t); !reflect.DeepEqual(withoutControl(again), withoutControl(after)) {
		t.Errorf("the second run changed bindings")
	}
}

func withoutControl(labels map[string]map[string]string) map[string]map[string]string {
	out := maps.Clone(labels)
	delete(out, "control-empty")
	return out
}

// skippedGauge reads hap_reconciler_skipped_objects by kind.
func skippedGauge(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "hap_reconciler_skipped_objects" {
			continue
		}
		for _, m := range f.GetMetric() {
			out[label(m, "kind")] = m.GetGauge().GetValue()
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// wantCandidates is the candidate table the landscape's truth calls for.
func wantCandidates(l *landscape.Landscape, p hap.Policy) map[string]hap.Candidate {
	want := map[string]hap.Candidate{}
	for _, c := range hap.DecideCandidates(hap.NewTally(l.Snapshot()), p) {
		want[c.BindingName] = c
	}
	return want
}

// checkCandidates compares the stored table with want; retired bindings
// were released in the run and so are no longer selectable.
func checkCandidates(t *testing.T, got []candidateRow, want map[string]hap.Candidate, retired ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d candidate rows, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for _, r := range got {
		w, ok := want[r.Binding]
		if slices.Contains(retired, r.Binding) {
			w.Selectable = false
		}
		if !ok || w.GlobalAccountID != r.GA || w.Rank != r.Rank || w.Selectable != r.Selectable || w.EffectiveCount != r.Effective {
			t.Errorf("candidate row %+v, want %+v", r, w)
		}
	}
}
