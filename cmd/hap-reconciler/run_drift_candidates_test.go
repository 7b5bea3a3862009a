package main

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

const plantedConfig = `
hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    limits: {default: 3, aws: 5, gcp: 6}
`

var aws = hap.Pool{HyperscalerType: "aws"}

// planted adds one case of every drift kind to l, with GAs of its own.
func planted(l *landscape.Landscape) {
	n := plantedAdmissible(l)
	n++
	runtime := fmt.Sprintf("rt-planted-%03d", n)
	// A shoot on a binding Gardener lacks: admission refuses to create one,
	// so the loader creates it on a stand-in binding it then deletes, as a
	// binding whose finalizer was removed by hand is gone.
	l.AddShoot(landscape.ShootSpec{BindingName: "planted-ghost", RuntimeID: runtime, GlobalAccountID: "ga-one", Pool: aws})
}

// plantedAdmissible adds one case of every drift kind Gardener's admission
// lets create directly and returns the number of clusters it planted.
func plantedAdmissible(l *landscape.Landscape) int {
	n := 0
	cluster := func(ga, binding string, shoot, instance bool) {
		n++
		runtime := fmt.Sprintf("rt-planted-%03d", n)
		if shoot {
			l.AddShoot(landscape.ShootSpec{BindingName: binding, RuntimeID: runtime, GlobalAccountID: ga, Pool: aws})
		}
		if instance {
			now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
			l.AddInstance(landscape.Instance{
				InstanceID: fmt.Sprintf("inst-planted-%03d", n), RuntimeID: runtime, GlobalAccountID: ga,
				SubscriptionSecretName: binding, Provider: "AWS", ServicePlanName: "aws",
				ProvisioningParameters: "{}", CreatedAt: now, UpdatedAt: now,
			})
		}
	}
	l.AddBinding(landscape.BindingSpec{Name: "planted-mismatch", Pool: aws, GlobalAccountID: "ga-one"})
	cluster("ga-one", "planted-mismatch", true, true)
	cluster("ga-one", "planted-mismatch", true, false)

	cluster("ga-two", "planted-vanished", false, true) // instance on a binding Gardener lacks

	l.AddBinding(landscape.BindingSpec{Name: "planted-free", Pool: aws})
	cluster("ga-one", "planted-free", true, true)

	l.AddBinding(landscape.BindingSpec{Name: "planted-dirty", Pool: aws, GlobalAccountID: "ga-one", Dirty: true})
	cluster("ga-one", "planted-dirty", false, true)
	cluster("ga-one", "planted-dirty", false, true)

	l.AddBinding(landscape.BindingSpec{Name: "planted-cross", Pool: aws, GlobalAccountID: "ga-one"})
	cluster("ga-one", "planted-cross", true, true)
	cluster("ga-two", "planted-cross", true, true)

	l.AddBinding(landscape.BindingSpec{Name: "planted-full", Pool: aws, GlobalAccountID: "ga-one"})
	for range 6 {
		cluster("ga-one", "planted-full", true, true)
	}
	return n
}

// admissiblePlantedFindings are the findings plantedAdmissible causes.
var admissiblePlantedFindings = []findingKey{
	{"planted-mismatch", "count_mismatch", "ga-one"},
	{"planted-vanished", "instance_on_missing_binding", "ga-two"},
	{"planted-free", "free_binding_in_use", ""},
	{"planted-dirty", "dirty_binding_in_use", "ga-one"},
	{"planted-cross", "cross_tenant", "ga-two"},
	{"planted-full", "over_limit", "ga-one"},
}

type findingKey struct{ binding, kind, ga string }

func TestRunRecordsEveryDriftAndTheExactCandidateTable(t *testing.T) {
	l := landscape.Generate(landscape.Options{Seed: 3, GlobalAccounts: 4})
	planted(l)
	s := load(t, l, plantedConfig)
	s.mustRun(t, "run", "--jobs", "drift,candidates")
	wantPlanted := append(slices.Clone(admissiblePlantedFindings), findingKey{"planted-ghost", "shoot_on_missing_binding", ""})
	s.assertRecordedAsDecided(t, l, wantPlanted)

	// A second run keeps first-seen times; a finding that went away is
	// resolved.
	firstSeen := s.firstSeen(t, findingKey{"planted-ghost", "shoot_on_missing_binding", ""})
	s.mustRun(t, "run", "--jobs", "drift")
	if again := s.firstSeen(t, findingKey{"planted-ghost", "shoot_on_missing_binding", ""}); !again.Equal(firstSeen) {
		t.Errorf("first seen moved from %s to %s", firstSeen, again)
	}
	if _, err := s.db(t).Exec(testContext(t), `UPDATE instances SET deleted_at = now() WHERE subscription_secret_name = 'planted-vanished'`); err != nil {
		t.Fatal(err)
	}
	vanished := findingKey{"planted-vanished", "instance_on_missing_binding", "ga-two"}
	if !s.openFindings(t)[vanished] {
		t.Fatalf("no open finding %+v to resolve", vanished)
	}
	s.mustRun(t, "run", "--jobs", "drift")
	if s.openFindings(t)[vanished] {
		t.Errorf("finding whose cause went away is still open: %+v", vanished)
	}
}

// assertRecordedAsDecided checks that the open findings include every
// planted one and are exactly what the decisions make of the landscape's
// truth, and that the candidate table is exactly the decision's.
func (s *scene) assertRecordedAsDecided(t *testing.T, l *landscape.Landscape, planted []findingKey) {
	t.Helper()
	cfg := config.Default()
	if err := config.Parse([]byte(plantedConfig), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	truth := hap.NewTally(l.Snapshot())

	got := s.openFindings(t)
	for _, want := range planted {
		if _, ok := got[want]; !ok {
			t.Errorf("missing finding %+v", want)
		}
	}
	want := map[findingKey]bool{}
	for _, f := range hap.DecideDrift(truth, cfg.Policy(), hap.DecideCandidates(truth, cfg.Policy())) {
		want[findingKey{f.BindingName, string(f.Kind), f.GlobalAccountID}] = true
	}
	if !reflect.DeepEqual(keys(got), keys(want)) {
		t.Errorf("open findings:\n got %v\nwant %v", keys(got), keys(want))
	}

	wantRows := hap.DecideCandidates(truth, cfg.Policy())
	gotRows := s.candidateRows(t)
	if !reflect.DeepEqual(gotRows, normalize(wantRows)) {
		t.Errorf("candidate rows:\n got %v\nwant %v", gotRows, normalize(wantRows))
	}
	for _, r := range gotRows {
		if r.BindingName == "planted-full" && (r.Selectable || *r.Limit != 5) {
			t.Errorf("a binding over its limit is listed, not selectable: %+v", r)
		}
	}
}

// findings reads the open findings through the job's store.
func (s *scene) findings(t *testing.T) map[findingKey]hap.OpenFinding {
	t.Helper()
	open, err := s.Store(t, testContext(t)).OpenFindings(testContext(t), hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[findingKey]hap.OpenFinding{}
	for _, f := range open {
		out[findingKey{f.BindingName, string(f.Kind), f.GlobalAccountID}] = f
	}
	return out
}

func (s *scene) openFindings(t *testing.T) map[findingKey]bool {
	t.Helper()
	out := map[findingKey]bool{}
	for k := range s.findings(t) {
		out[k] = true
	}
	return out
}

func (s *scene) firstSeen(t *testing.T, k findingKey) time.Time {
	t.Helper()
	f, ok := s.findings(t)[k]
	if !ok {
		t.Fatalf("no open finding %+v", k)
	}
	return f.FirstSeen
}

// candidateRows reads the candidate table through the job's store.
func (s *scene) candidateRows(t *testing.T) []hap.Candidate {
	t.Helper()
	stored, err := s.Store(t, testContext(t)).Candidates(testContext(t), hap.AllGlobalAccounts)
	if err != nil {
		t.Fatal(err)
	}
	var out []hap.Candidate
	for _, c := range stored {
		out = append(out, c.Candidate)
	}
	return normalize(out)
}

func normalize(rows []hap.Candidate) []hap.Candidate {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b hap.Candidate) int { return cmp.Compare(a.BindingName, b.BindingName) })
	return out
}

func keys[V any](m map[findingKey]V) []findingKey {
	out := make([]findingKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b findingKey) int {
		return cmp.Or(cmp.Compare(a.binding, b.binding), cmp.Compare(a.kind, b.kind), cmp.Compare(a.ga, b.ga))
	})
	return out
}
