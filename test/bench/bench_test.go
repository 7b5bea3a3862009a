package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// The whole benchmark on a landscape small enough for a test: every figure
// the report promises is measured, the ratios are computed from them, and
// the report prints and encodes. It proves the benchmark works, not how
// fast anything is.
func TestMeasureFillsEveryFigureOnATinyLandscape(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a test bed and builds hap-reconciler")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	binary, err := testbed.BuildBinary(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bed, err := testbed.StartBed(ctx, BedOptions(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := bed.Stop(); err != nil {
			t.Error(err)
		}
	})

	var progress bytes.Buffer
	r, err := Measure(ctx, bed, Options{
		Sizes: []Size{{Name: "tiny", Shoots: 20}}, Picks: 20, Repeats: 1, SteadyCycles: 1, Seed: 5, TableRewriteEvery: 30,
		Binary: binary, WorkDir: t.TempDir(), Progress: &progress,
		Rewrites: RewriteLoad{Bindings: 300, Pickers: 2, Every: 0.5, ChangedShare: 0.2, Duration: 3},
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(r.Sizes) != 1 {
		t.Fatalf("%d sizes measured, want 1", len(r.Sizes))
	}
	s := r.Sizes[0]
	positive := map[string]float64{
		"shoots":                float64(s.Landscape.Shoots),
		"instance rows":         float64(s.Landscape.InstanceRows - s.Landscape.ActiveInstances),
		"run wall":              float64(s.Run.Wall),
		"run CPU":               float64(s.Run.CPU),
		"run peak RSS":          s.Run.MaxRSSMB,
		"run list shoots":       float64(s.Run.Phases.ListShoots),
		"run DB counts":         float64(s.Run.Phases.ReadDatabase),
		"run write":             float64(s.Run.Phases.Write),
		"floor wall":            float64(s.Floor.Wall),
		"JSON floor wall":       float64(s.JSONFloor.Wall),
		"run over JSON floor":   s.Ratios.RunOverJSONFloor,
		"floor shoot pages":     float64(s.Floor.Shoots.Pages),
		"floor count query":     float64(s.Floor.CountQuery),
		"watched cycle":         float64(s.Steady.Wall),
		"watch first fill":      float64(s.Steady.FirstFill),
		"cached fill floor":     float64(s.Steady.CachedFill.Wall),
		"cached fill bytes":     float64(s.Steady.CachedFill.Shoots.Bytes),
		"live path p99":         float64(s.Picks.LivePath.P99),
		"one query p99":         float64(s.Picks.OneQuery.P99),
		"run over floor":        s.Ratios.RunOverFloor,
		"live over one query":   s.Ratios.LivePathOverOneQueryP50,
		"watched cycle vs run":  s.Ratios.SteadyOverRun,
		"run time per 1000":     s.Ratios.RunMillisPer1000Shoots,
		"served bytes of shoot": s.Landscape.ServedKBPerShoot,
		"rewrites":              float64(r.Rewrites.Load.Rewrites),
		"change to table p50":   float64(s.Steady.ChangeToTable.P50),
		"picks during rewrites": float64(r.Rewrites.During.Picks),
		"picks outside":         float64(r.Rewrites.Outside.Picks),
		"pick p99.9 outside":    float64(r.Rewrites.Outside.P999),
	}
	for what, v := range positive {
		if !(v > 0) {
			t.Errorf("%s = %v, want a measured value", what, v)
		}
	}
	if s.Landscape.Shoots < 20 || s.Picks.LivePath.Picks != 20 || s.Picks.OneQuery.Picks != 20 {
		t.Errorf("landscape %+v, picks %+v: not what was asked for", s.Landscape, s.Picks)
	}
	// 50 warm-up and 20 measured one-query picks, the table rewritten
	// before the 31st and the 61st.
	if s.Picks.TableRewriteEvery != 30 || s.Picks.TableRewrites != 2 {
		t.Errorf("the candidate table was rewritten %d times, every %d picks; want 2, every 30", s.Picks.TableRewrites, s.Picks.TableRewriteEvery)
	}
	if kb := s.Landscape.ServedKBPerShoot; kb < 14 || kb > 21 {
		t.Errorf("served %.1f KB per shoot, want about 17", kb)
	}
	if len(r.Targets) == 0 {
		t.Error("no targets judged")
	}
	// A tiny run may cost the servers less than a clock tick; what they
	// have spent since they started is read from /proc all the same.
	if s.Run.ServerCPU < 0 || ServerCPU(bed.Kube.PIDs()) <= 0 {
		t.Errorf("servers' CPU: %v during the run, %v in all; want it read", s.Run.ServerCPU, ServerCPU(bed.Kube.PIDs()))
	}
	// gardener-apiserver answers the job's format, protobuf; the JSON floor
	// asks for JSON and gets it.
	if shortFormat(s.Floor.Format) != "protobuf" || shortFormat(s.JSONFloor.Format) != "JSON" {
		t.Errorf("floor formats %q and %q, want protobuf and JSON", s.Floor.Format, s.JSONFloor.Format)
	}

	var table bytes.Buffer
	if err := PrintTable(&table, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tiny", "run/floor", "Targets", r.Machine.CPUModel, "Picks while the candidate table is rewritten"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	encoded, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var decoded Report
	if err := json.Unmarshal(encoded, &decoded); err != nil || decoded.Sizes[0].Ratios != s.Ratios {
		t.Fatalf("report does not survive JSON: %v\n%s", err, encoded)
	}
}
