package hap

import (
	"testing"
)

// choice returns what provisioning would do for ga in pool.
func choice(t *testing.T, rows []Candidate, ga string, pool Pool) Choice {
	t.Helper()
	var group []Candidate
	for _, r := range rows {
		if r.GlobalAccountID == ga && r.Pool == pool {
			group = append(group, r)
		}
	}
	return Choose(group)
}

func TestCandidatesFollowTheADRExamples(t *testing.T) {
	aws200 := limits(3, map[string]int{"aws": 200})
	tests := []struct {
		name   string
		fleet  *fleet
		policy Policy
		want   Choice
	}{
		{"150 on A -> A", new(fleet).binding("A", "ga", awsPool).clusters("A", "ga", 150), aws200, Choice{Binding: "A"}},
		{"200 on A -> claim new", new(fleet).binding("A", "ga", awsPool).clusters("A", "ga", 200), aws200, Choice{ClaimNew: true}},
		{"200 on A, 150 on B -> B", new(fleet).binding("A", "ga", awsPool).clusters("A", "ga", 200).
			binding("B", "ga", awsPool).clusters("B", "ga", 150), aws200, Choice{Binding: "B"}},
		{"199 on A, 150 on B -> A", new(fleet).binding("A", "ga", awsPool).clusters("A", "ga", 199).
			binding("B", "ga", awsPool).clusters("B", "ga", 150), aws200, Choice{Binding: "A"}},
		{"250 with limit 180 keeps working but is not selectable", new(fleet).binding("A", "ga", awsPool).clusters("A", "ga", 250),
			limits(3, map[string]int{"aws": 180}), Choice{ClaimNew: true}},
		{"179 after 71 deprovisioned -> available again", new(fleet).binding("A", "ga", awsPool).clusters("A", "ga", 179),
			limits(3, map[string]int{"aws": 180}), Choice{Binding: "A"}},
		{"tie goes to the name that sorts first", new(fleet).binding("B", "ga", awsPool).clusters("B", "ga", 5).
			binding("A", "ga", awsPool).clusters("A", "ga", 5), aws200, Choice{Binding: "A"}},
		{"effective count is the larger side", new(fleet).binding("A", "ga", awsPool).instances("A", "ga", 10).shoots("A", "ga", 200),
			aws200, Choice{ClaimNew: true}},
		{"no binding yet -> claim new", new(fleet), aws200, Choice{ClaimNew: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := choice(t, DecideCandidates(tc.fleet.tally(), tc.policy), "ga", awsPool)
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCandidatesAllowlistModes(t *testing.T) {
	// A (30 clusters) sorts first, B (10) is the most populated below limit 20.
	f := new(fleet).binding("A", "ga", awsPool).clusters("A", "ga", 30).
		binding("B", "ga", awsPool).clusters("B", "ga", 10).
		binding("C", "ga", awsPool).clusters("C", "ga", 2)
	withList := func(gas ...string) Policy {
		p := Policy{DefaultLimit: 20, Allowed: map[string]bool{}}
		for _, ga := range gas {
			p.Allowed[ga] = true
		}
		return p
	}
	tests := []struct {
		name   string
		policy Policy
		want   Choice
		limit  bool
	}{
		{"feature off (missing block)", Policy{}, Choice{Binding: "A"}, false},
		{"empty allowlist", withList(), Choice{Binding: "A"}, false},
		{"GA not in the list", withList("other"), Choice{Binding: "A"}, false},
		{"GA in the list", withList("other", "ga"), Choice{Binding: "B"}, true},
		{"star", Policy{AllowAll: true, DefaultLimit: 20}, Choice{Binding: "B"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := DecideCandidates(f.tally(), tc.policy)
			if got := choice(t, rows, "ga", awsPool); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for _, r := range rows {
				if (r.Limit != nil) != tc.limit {
					t.Fatalf("row %s: limit %v, want limit set = %v", r.BindingName, r.Limit, tc.limit)
				}
				if !tc.limit && !r.Selectable {
					t.Fatalf("row %s without limit must be selectable", r.BindingName)
				}
			}
		})
	}
}

func TestCandidatesLimitPerProvider(t *testing.T) {
	gcp := Pool{HyperscalerType: "gcp"}
	os := Pool{HyperscalerType: "openstack_eu-de-1"}
	f := new(fleet).
		binding("aws-1", "ga", awsPool).clusters("aws-1", "ga", 4).
		binding("gcp-1", "ga", gcp).clusters("gcp-1", "ga", 4).
		binding("os-1", "ga", os, func(b *Binding) { b.ProviderType = "" }).clusters("os-1", "ga", 4).
		binding("az-1", "ga", Pool{HyperscalerType: "azure"}, func(b *Binding) { b.ProviderType = "Azure" })
	p := limits(3, map[string]int{"aws": 5, "openstack": 4})
	want := map[string]int{"aws-1": 5, "gcp-1": 3, "os-1": 4, "az-1": 3}
	for _, r := range DecideCandidates(f.tally(), p) {
		if *r.Limit != want[r.BindingName] {
			t.Errorf("%s: limit %d, want %d", r.BindingName, *r.Limit, want[r.BindingName])
		}
		if wantHeadroom := want[r.BindingName] - r.EffectiveCount; *r.Headroom != wantHeadroom {
			t.Errorf("%s: headroom %d, want %d", r.BindingName, *r.Headroom, wantHeadroom)
		}
	}
}

func TestCandidatesSharedDirtyInternalFree(t *testing.T) {
	f := new(fleet).
		binding("shared-busy", "", awsPool, shared).clusters("shared-busy", "x", 9).
		binding("shared-quiet", "", awsPool, shared).clusters("shared-quiet", "y", 2).
		binding("shared-dirty", "", awsPool, shared, dirty).clusters("shared-dirty", "z", 4).
		binding("dirty", "ga", awsPool, dirty).
		binding("free", "", awsPool).
		binding("internal", "ga", awsPool, internal).clusters("internal", "ga", 1)
	rows := DecideCandidates(f.tally(), limits(3, nil))
	got := map[string]Candidate{}
	for _, r := range rows {
		got[r.BindingName] = r
	}
	for _, absent := range []string{"dirty", "free"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%s must not be a candidate", absent)
		}
	}
	// KEB's shared selector (hyperscalerType=X, euAccess, shared=true) does
	// not read dirty: a dirty shared binding stays in the shared pool.
	if r, ok := got["shared-dirty"]; !ok || r.Rank != 2 {
		t.Errorf("a dirty shared binding is still in KEB's shared pool: %+v", r)
	}
	if c := choice(t, rows, "", awsPool); c.Binding != "shared-quiet" {
		t.Errorf("shared pool: got %+v, want the least used binding", c)
	}
	if r := got["shared-busy"]; r.GlobalAccountID != "" || r.Limit != nil || r.Rank != 3 {
		t.Errorf("shared row: %+v", r)
	}
	if c := choice(t, rows, "ga", awsPool); c.Binding != "internal" {
		t.Errorf("an internal binding claimed by the GA is still the GA's: got %+v", c)
	}
}
