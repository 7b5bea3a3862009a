package report

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

type fakeShadowStore []hap.ShadowResult

func (f fakeShadowStore) ShadowPicks(_ context.Context, since time.Time) ([]hap.ShadowResult, error) {
	var out []hap.ShadowResult
	for _, r := range f {
		if !r.At.Before(since) {
			out = append(out, r)
		}
	}
	return out, nil
}

func TestShadowReportCountsPicksAndListsEveryDifference(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	aws := hap.Pool{HyperscalerType: "aws"}
	store := fakeShadowStore{
		{InstanceID: "old", GlobalAccountID: "ga-a", Pool: aws, KEBBinding: "b-1", Table: "b-2", Outcome: hap.ShadowDrift, At: t0.Add(-48 * time.Hour)},
		{InstanceID: "i-1", GlobalAccountID: "ga-a", Pool: aws, KEBBinding: "b-1", Table: "b-1", Outcome: hap.ShadowAgree, At: t0},
		{InstanceID: "i-2", GlobalAccountID: "ga-a", Pool: aws, KEBBinding: "b-1", Table: "b-1", Outcome: hap.ShadowAgree, At: t0.Add(time.Minute)},
		{InstanceID: "i-3", GlobalAccountID: "ga-b", Pool: aws, KEBBinding: "b-9", Table: "b-8", Outcome: hap.ShadowDeviation,
			Detail: "KEB took b-9 with 10 shoot(s) in Gardener", At: t0.Add(2 * time.Minute)},
		{InstanceID: "i-4", GlobalAccountID: "ga-b", Pool: aws, KEBBinding: "b-8", Outcome: hap.ShadowStaleness, At: t0.Add(3 * time.Minute)},
	}
	rep, err := Shadow(context.Background(), store, t0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Picks != 4 || rep.Agree != 2 || rep.ByOutcome[hap.ShadowDeviation] != 1 || rep.ByOutcome[hap.ShadowDrift] != 0 || len(rep.Differences) != 2 {
		t.Fatalf("report %+v; want 4 picks, 2 agreeing, one deviation and one staleness listed", rep)
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out, Layout{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"KEB made 4 pick(s); the candidate table would have made the same pick in 2 (50.0%). deviation: 1. staleness: 1.",
		"i-3", "b-9", "b-8", "KEB took b-9 with 10 shoot(s) in Gardener",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "old") {
		t.Errorf("a pick before the window is listed:\n%s", out.String())
	}
}

func TestShadowReportWithoutPicksSaysSo(t *testing.T) {
	rep := buildShadowReport(nil, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
	if got := rep.Summary(); got != "Since 2026-11-20T00:00:00Z KEB made no pick the job could compare with the candidate table." {
		t.Fatalf("summary %q", got)
	}
}
