package report

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

// fakeTables is the job's stored tables in memory; failing makes every
// read fail, for reads that must not touch them.
type fakeTables struct {
	fakeShadowStore
	fakeHistory
	candidates []hap.StoredCandidate
	findings   []hap.OpenFinding
	failing    bool
}

var errTablesRead = errors.New("the stored tables were read")

func (f *fakeTables) Candidates(context.Context, string) ([]hap.StoredCandidate, error) {
	if f.failing {
		return nil, errTablesRead
	}
	return f.candidates, nil
}

func (f *fakeTables) OpenFindings(context.Context, string) ([]hap.OpenFinding, error) {
	if f.failing {
		return nil, errTablesRead
	}
	return f.findings, nil
}

// fakeSnapshot gathers facts decided from bindings and instances.
type fakeSnapshot struct {
	bindings  []hap.Binding
	instances []hap.InstanceCount
	gathered  int
}

func (s *fakeSnapshot) Gather(context.Context) (*jobs.Facts, error) {
	s.gathered++
	tally := hap.NewShootCounter(s.instances).Tally(s.bindings)
	return &jobs.Facts{Bindings: s.bindings, Tally: tally, Policy: hap.Policy{DefaultLimit: hap.NoLimit}}, nil
}

var readerNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func newReader(t *testing.T, tables *fakeTables, snap *fakeSnapshot) Reader {
	return Reader{Tables: tables, Snapshot: snap, Rules: fakeRules{}, Now: func() time.Time { return readerNow }, Log: zaptest.NewLogger(t)}
}

// A stored report reads the table and the findings, and carries how KEB's
// picks since the given time compare; it gathers nothing.
func TestStoredReportReadsTheTablesWithTheShadowSummary(t *testing.T) {
	aws := hap.Pool{HyperscalerType: "aws"}
	tables := &fakeTables{
		candidates: []hap.StoredCandidate{{Candidate: hap.Candidate{GlobalAccountID: "ga-1", Pool: aws, BindingName: "aws-1", Rank: 1, Selectable: true},
			ComputedAt: readerNow.Add(-time.Minute)}},
		fakeShadowStore: fakeShadowStore{
			{At: readerNow.Add(-time.Hour), Outcome: hap.ShadowAgree},
			{At: readerNow.Add(-48 * time.Hour), Outcome: hap.ShadowAgree},
		},
	}
	snap := &fakeSnapshot{}
	rep, err := newReader(t, tables, snap).Report(context.Background(), "", false, readerNow.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source != "stored" || !rep.ComputedAt.Equal(readerNow.Add(-time.Minute)) || len(rep.Groups) != 1 || rep.Groups[0].Next != "aws-1" {
		t.Errorf("stored report %+v; want the stored row, computed a minute ago, aws-1 next", rep)
	}
	if rep.Shadow == nil || rep.Shadow.Picks != 1 || rep.Shadow.Agree != 1 {
		t.Errorf("shadow summary %+v; want the one pick of the last day, agreeing", rep.Shadow)
	}
	if snap.gathered != 0 {
		t.Error("a stored report gathered a snapshot")
	}
}

// A live report and live pools decide on a fresh snapshot and never read the
// stored table; live pools still estimate from the recorded history.
func TestLiveReadsDecideOnAFreshSnapshot(t *testing.T) {
	aws := hap.Pool{HyperscalerType: "aws"}
	snap := &fakeSnapshot{
		bindings: []hap.Binding{
			{Name: "aws-busy", GlobalAccountID: "ga-1", Pool: aws},
			{Name: "aws-free", Pool: aws},
		},
		instances: []hap.InstanceCount{{BindingName: "aws-busy", GlobalAccountID: "ga-1", Active: 2}},
	}
	var history []hap.PoolSample
	for day := 10; day >= 0; day-- {
		history = append(history, hap.PoolSample{At: readerNow.AddDate(0, 0, -day), Free: 1 + day, Claimed: 1})
	}
	tables := &fakeTables{failing: true, fakeHistory: fakeHistory{aws: history}}
	r := newReader(t, tables, snap)

	rep, err := r.Report(context.Background(), "ga-1", true, readerNow)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source != "live" || !rep.ComputedAt.Equal(readerNow) || len(rep.Groups) != 1 || rep.Groups[0].Next != "aws-busy" ||
		len(rep.Groups[0].Rows) != 1 || rep.Groups[0].Rows[0].DBCount != 2 {
		t.Errorf("live report %+v; want ga-1's aws-busy with its 2 instances, next", rep)
	}

	rows, err := r.Pools(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].HyperscalerType != "aws" || rows[0].Free != 1 || rows[0].Claimed != 1 || rows[0].DaysLeft == nil {
		t.Errorf("live pools %+v; want aws with 1 free, 1 claimed and an estimate from the history", rows)
	}
	if snap.gathered != 2 {
		t.Errorf("gathered %d snapshots; want one per live read", snap.gathered)
	}
}

// A report for a GA nothing names fails, saying so, instead of printing an
// empty table and succeeding: a mistyped ID looks like a GA without
// clusters otherwise.
func TestAReportForAGANothingNamesFails(t *testing.T) {
	aws := hap.Pool{HyperscalerType: "aws"}
	tables := &fakeTables{candidates: []hap.StoredCandidate{{Candidate: hap.Candidate{GlobalAccountID: "ga-1", Pool: aws, BindingName: "aws-1", Rank: 1, Selectable: true},
		ComputedAt: readerNow.Add(-time.Minute)}}}
	snap := &fakeSnapshot{bindings: []hap.Binding{{Name: "aws-1", GlobalAccountID: "ga-1", Pool: aws}}}
	for _, live := range []bool{false, true} {
		if _, err := newReader(t, tables, snap).Report(context.Background(), "ga-1", live, readerNow); err != nil {
			t.Errorf("live=%v: the report of a GA with rows: %v", live, err)
		}
		_, err := newReader(t, tables, snap).Report(context.Background(), "nosuch", live, readerNow)
		if !errors.Is(err, errUnknownGA) || !strings.Contains(err.Error(), `--ga "nosuch"`) {
			t.Errorf("live=%v: the report of an unknown GA: %v, want errUnknownGA naming it", live, err)
		}
	}
}

// A table no candidates run ever wrote says so, rather than "computed
// 0001-01-01"; JSON leaves the time out.
func TestAReportOfATableNeverWrittenSaysSo(t *testing.T) {
	rep, err := newReader(t, &fakeTables{}, &fakeSnapshot{}).Report(context.Background(), "", false, readerNow)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := rep.WriteTable(&text, Layout{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "never written") || strings.Contains(text.String(), "0001-01-01") {
		t.Errorf("report of a table never written:\n%s", text.String())
	}
	if js, _ := json.Marshal(rep); strings.Contains(string(js), "computedAt") {
		t.Errorf("JSON of a table never written carries a computedAt: %s", js)
	}
}

// report --live on a picture a run would refuse (a wrong namespace) still
// prints what it sees, and warns that a run would change nothing on it.
func TestALiveReportWarnsOfAPictureARunWouldRefuse(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	r := newReader(t, &fakeTables{}, &fakeSnapshot{instances: []hap.InstanceCount{{BindingName: "aws-1", GlobalAccountID: "ga-1", Active: 2}}})
	r.Log = zap.New(core)
	if _, err := r.Report(context.Background(), "", true, readerNow); err != nil {
		t.Fatal(err)
	}
	if logs.FilterMessageSnippet("a run would refuse this picture").Len() != 1 {
		t.Errorf("no warning of a picture a run would refuse: %v", logs.All())
	}
}
