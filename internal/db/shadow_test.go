package db

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// The shadow job reads the candidate history of the groups its picks fall
// in, not the whole table's: other GAs, other pools of the same GA and
// versions that ended before the window are left in the database.
func TestCandidateVersionsReadsOnlyTheGroupsAsked(t *testing.T) {
	s, _ := migratedStore(t)
	ctx := testContext(t)
	aws, gcp := hap.Pool{HyperscalerType: "aws"}, hap.Pool{HyperscalerType: "gcp"}
	first := []hap.Candidate{
		{GlobalAccountID: "ga-a", Pool: aws, BindingName: "a-aws", DBCount: 1, EffectiveCount: 1, Selectable: true, Rank: 1},
		{GlobalAccountID: "ga-a", Pool: gcp, BindingName: "a-gcp", DBCount: 1, EffectiveCount: 1, Selectable: true, Rank: 1},
		{GlobalAccountID: "ga-b", Pool: aws, BindingName: "b-aws", DBCount: 1, EffectiveCount: 1, Selectable: true, Rank: 1},
		{Pool: aws, BindingName: "shared-aws", DBCount: 1, EffectiveCount: 1, Selectable: true, Rank: 1},
	}
	if err := s.ReplaceCandidates(ctx, first, nil, time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	between := databaseNow(t, s)
	second := slices.Clone(first)
	second[0].DBCount, second[0].EffectiveCount = 2, 2 // a-aws gets a second version
	if err := s.ReplaceCandidates(ctx, second, nil, time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	afterwards := databaseNow(t, s)
	if err := s.ReplaceCandidates(ctx, second, nil, time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}

	counts := func(vs []hap.CandidateVersion) map[string][]int {
		out := map[string][]int{}
		for _, v := range vs {
			out[v.BindingName] = append(out[v.BindingName], v.DBCount)
		}
		for _, c := range out {
			slices.Sort(c)
		}
		return out
	}
	group := func(ga string, pool hap.Pool) hap.ShadowGroup {
		return hap.ShadowGroup{GlobalAccountID: ga, Pool: pool}
	}
	for _, c := range []struct {
		name   string
		from   time.Time
		groups []hap.ShadowGroup
		want   map[string][]int
	}{
		{"both versions of ga-a's aws row", between, []hap.ShadowGroup{group("ga-a", aws)}, map[string][]int{"a-aws": {1, 2}}},
		{"the version held from then on", afterwards, []hap.ShadowGroup{group("ga-a", aws)}, map[string][]int{"a-aws": {2}}},
		{"the shared pool and another GA", afterwards, []hap.ShadowGroup{group("", aws), group("ga-b", aws)},
			map[string][]int{"shared-aws": {1}, "b-aws": {1}}},
		{"no groups", between, nil, map[string][]int{}},
	} {
		got, err := s.CandidateVersions(ctx, c.from, c.groups)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if g := counts(got); !maps.EqualFunc(g, c.want, slices.Equal[[]int]) {
			t.Errorf("%s: read %v; want %v", c.name, g, c.want)
		}
		for _, v := range got {
			if v.ValidFrom.IsZero() || (v.BindingName == "a-aws" && v.DBCount == 1 && v.ValidTo.IsZero()) {
				t.Errorf("%s: %s version %d held %s to %s", c.name, v.BindingName, v.DBCount, v.ValidFrom, v.ValidTo)
			}
		}
	}
}
