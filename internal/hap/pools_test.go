package hap

import (
	"math"
	"testing"
	"time"
)

func TestDecidePoolsCountsWhatKEBsSelectorsSee(t *testing.T) {
	eu := Pool{HyperscalerType: "aws", EUAccess: true}
	f := new(fleet).
		binding("a-1", "ga", awsPool).clusters("a-1", "ga", 9).
		binding("a-2", "ga2", awsPool).clusters("a-2", "ga2", 2).
		binding("a-free", "", awsPool).
		binding("a-dirty", "old", awsPool, dirty).
		binding("a-odd", "ga", awsPool, func(b *Binding) { b.OutOfPool = "label dirty has value \"false\"" }).
		binding("eu-free", "", eu).
		binding("sh-1", "", awsPool, shared).clusters("sh-1", "x", 3)
	p := limits(10, nil)
	got := DecidePools(f.tally(), DecideCandidates(f.tally(), p))
	if len(got) != 3 {
		t.Fatalf("pools %+v, want aws, aws shared, aws eu", got)
	}
	aws, awsShared, awsEU := got[0], got[1], got[2]
	if aws.PoolKey != (PoolKey{Pool: awsPool}) || aws.Free != 1 || aws.Claimed != 2 || aws.Dirty != 1 || aws.Clusters != 11 {
		t.Errorf("aws: %+v", aws)
	}
	if len(aws.NearlyFull) != 1 || aws.NearlyFull[0] != "ga" {
		t.Errorf("aws nearly full %v, want ga (9 of 10 on its only binding)", aws.NearlyFull)
	}
	if !awsShared.Shared || awsShared.SharedBindings != 1 || awsShared.Clusters != 3 {
		t.Errorf("aws shared: %+v", awsShared)
	}
	if awsEU.PoolKey != (PoolKey{Pool: eu}) || awsEU.Free != 1 {
		t.Errorf("aws eu: %+v", awsEU)
	}
}

func TestEstimateExhaustionAtTheRecentClaimRate(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	daily := func(free ...int) []PoolSample {
		var out []PoolSample
		for i, f := range free {
			out = append(out, PoolSample{At: now.Add(-time.Duration(len(free)-1-i) * day), Free: f})
		}
		return out
	}
	tests := []struct {
		name    string
		samples []PoolSample
		days    float64
	}{
		{"two a day down, 10 left: 5 days", daily(20, 18, 16, 14, 12, 10), 5},
		{"steady", daily(7, 7, 7, 7), math.Inf(1)},
		{"growing", daily(3, 4, 6), math.Inf(1)},
		{"one sample, some left: no trend", daily(4), math.Inf(1)},
		{"none left", daily(2, 1, 0), 0},
		{"no samples", nil, math.Inf(1)},
		{"samples older than the window do not count", append([]PoolSample{{At: now.Add(-40 * day), Free: 100}}, daily(10, 10)...), math.Inf(1)},
		{"a sample from the future does not count", append(daily(10, 9), PoolSample{At: now.Add(day), Free: 0}), 9},
	}
	for _, tc := range tests {
		got := estimateExhaustion(tc.samples, now, 14*day)
		if math.Abs(got.Days-tc.days) > 1e-9 && !(math.IsInf(got.Days, 1) && math.IsInf(tc.days, 1)) {
			t.Errorf("%s: %.3f days (trend %.3f/day over %d samples), want %.3f", tc.name, got.Days, got.FreePerDay, got.Samples, tc.days)
		}
	}
}
