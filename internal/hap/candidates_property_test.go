package hap

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// counts is one binding's two views: the GA's own active instances in KEB's
// database and the shoots Gardener shows on it.
type counts struct{ db, shoots int }

// adrChoice states the ADR's rule on its own terms, with the job's one
// deviation: among the GA's bindings of the pool whose own instances are
// below the limit, take the one with the most (ties to the first name),
// leaving out a binding Gardener shows full; when there is none, claim a new
// binding.
func adrChoice(clusters map[string]counts, limit int) Choice {
	best, bestCount := "", -1
	for name, n := range clusters {
		if n.db >= limit || n.shoots >= limit {
			continue
		}
		if n.db > bestCount || (n.db == bestCount && name < best) {
			best, bestCount = name, n.db
		}
	}
	if best == "" {
		return Choice{ClaimNew: true}
	}
	return Choice{Binding: best}
}

func TestRankOneMatchesTheADRRuleOnRandomFleets(t *testing.T) {
	const fleets = 5000
	agreedWithKEB := 0
	for seed := uint64(1); seed <= fleets; seed++ {
		rng := rand.New(rand.NewPCG(seed, 42))
		limit := 1 + rng.IntN(20)
		f := new(fleet)
		want := map[string]map[string]counts{} // GA -> binding -> counts
		for g := 0; g < 1+rng.IntN(4); g++ {
			ga := fmt.Sprintf("ga-%d", g)
			want[ga] = map[string]counts{}
			for b := 0; b < rng.IntN(5); b++ {
				name := fmt.Sprintf("b-%d-%d", g, rng.IntN(1000))
				if _, dup := want[ga][name]; dup {
					continue
				}
				db, shoots := rng.IntN(limit+5), rng.IntN(limit+5)
				f.binding(name, ga, awsPool).instances(name, ga, db).shoots(name, ga, shoots)
				want[ga][name] = counts{db, shoots}
			}
		}
		rows := DecideCandidates(f.tally(), limits(limit, nil))
		for ga, clusters := range want {
			got := choice(t, rows, ga, awsPool)
			if exp := adrChoice(clusters, limit); got != exp {
				t.Fatalf("seed %d, GA %s, limit %d, clusters %v: got %+v, want %+v", seed, ga, limit, clusters, got, exp)
			}
			// Where Gardener shows no binding full, rank 1 is KEB's choice.
			if !anyFullByShoots(clusters, limit) {
				if keb := KEBChoice(groupOf(rows, ga, awsPool)); got != keb {
					t.Fatalf("seed %d, GA %s, limit %d, clusters %v: no binding full by shoots, got %+v, KEB picks %+v",
						seed, ga, limit, clusters, got, keb)
				}
				agreedWithKEB++
			}
		}
	}
	if agreedWithKEB == 0 {
		t.Fatal("no generated group had every binding below its limit by shoots")
	}
}

func anyFullByShoots(clusters map[string]counts, limit int) bool {
	for _, n := range clusters {
		if n.shoots >= limit {
			return true
		}
	}
	return false
}

// groupOf returns the rows of one (GA, pool) group.
func groupOf(rows []Candidate, ga string, pool Pool) []Candidate {
	var out []Candidate
	for _, r := range rows {
		if r.GlobalAccountID == ga && r.Pool == pool {
			out = append(out, r)
		}
	}
	return out
}
