package bench

import (
	"strings"
	"testing"
	"time"
)

func TestParsePhasesSplitsTheRunAtItsLogLines(t *testing.T) {
	log := strings.Join([]string{
		`not json: a line some library printed`,
		`{"level":"info","ts":"2026-01-02T10:00:01.500Z","msg":"gathered the fleet","listBindings":0.2,"listShoots":1.2,"readDatabase":0.3}`,
		`{"level":"debug","ts":"2026-01-02T10:00:01.600Z","msg":"decided","job":"drift"}`,
		`{"level":"info","ts":"2026-01-02T10:00:01.900Z","msg":"job done","job":"drift","took":0.4}`,
		`{"level":"debug","ts":"2026-01-02T10:00:02.000Z","msg":"decided","job":"candidates"}`,
		`{"level":"info","ts":"2026-01-02T10:00:02.500Z","msg":"job done","job":"candidates","took":0.6}`,
		`{"level":"info","ts":"2026-01-02T10:00:02.550Z","msg":"job done","job":"metrics","took":0.05}`,
	}, "\n")
	start := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	p, err := parsePhases([]byte(log), start, start.Add(2600*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got Seconds, want float64) {
		t.Helper()
		if d := float64(got) - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("gather", p.Gather, 1.2)
	near("startup", p.Startup, 0.3)
	near("decide", p.Decide, 0.1+0.1+0.05)
	near("write", p.Write, 0.3+0.5)
	near("exit", p.Exit, 0.05)
	near("candidates job", p.Jobs["candidates"], 0.6)
}

func TestParsePhasesNeedsTheGatheredLine(t *testing.T) {
	if _, err := parsePhases([]byte(`{"ts":"2026-01-02T10:00:01.500Z","msg":"job done","job":"drift","took":1}`), time.Now(), time.Now()); err == nil {
		t.Fatal("a log without the gathered line was accepted")
	}
}

func TestContinueTokenIsReadFromTheListMetadataAtThePageEnd(t *testing.T) {
	page := `{"apiVersion":"v1","items":[{"metadata":{"name":"a","continue":"not-this"}}],"kind":"ShootList",` +
		`"metadata":{"continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ","resourceVersion":"42"}}`
	if got, err := continueToken([]byte(page)); err != nil || got != "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ" {
		t.Fatalf("continueToken = %q, %v", got, err)
	}
	last := `{"apiVersion":"v1","items":[],"kind":"ShootList","metadata":{"resourceVersion":"42"}}`
	if got, err := continueToken([]byte(last)); err != nil || got != "" {
		t.Fatalf("continueToken of the last page = %q, %v", got, err)
	}
	if _, err := continueToken([]byte(`{"items":[]}`)); err == nil {
		t.Fatal("a page without list metadata was accepted")
	}
}

func TestParseSizes(t *testing.T) {
	sizes, err := ParseSizes("s, M,L,300")
	if err != nil {
		t.Fatal(err)
	}
	want := []Size{{"S", 2000}, {"M", 10000}, {"L", 20000}, {"300", 300}}
	if len(sizes) != len(want) {
		t.Fatalf("sizes %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Errorf("size %d = %v, want %v", i, sizes[i], want[i])
		}
	}
	for _, bad := range []string{"", "XL", "5", " , "} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q) succeeded", bad)
		}
	}
}
