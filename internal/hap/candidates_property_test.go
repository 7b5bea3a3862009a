package hap

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// adrChoice states the ADR's rule on its own terms: among the GA's bindings
// of the pool, take the one with the most clusters that is still below the
// limit (ties to the first name); when there is none, claim a new binding.
func adrChoice(clusters map[string]int, limit int) Choice {
	best, bestCount := "", -1
	for name, n := range clusters {
		if n >= limit {
			continue
		}
		if n > bestCount || (n == bestCount && name < best) {
			best, bestCount = name, n
		}
	}
	if best == "" {
		return Choice{ClaimNew: true}
	}
	return Choice{Binding: best}
}

func TestRankOneMatchesTheADRRuleOnRandomFleets(t *testing.T) {
	const fleets = 5000
	for seed := uint64(1); seed <= fleets; seed++ {
		rng := rand.New(rand.NewPCG(seed, 42))
		limit := 1 + rng.IntN(20)
		f := new(fleet)
		want := map[string]map[string]int{} // GA -> binding -> effective
		for g := 0; g < 1+rng.IntN(4); g++ {
			ga := fmt.Sprintf("ga-%d", g)
			want[ga] = map[string]int{}
			for b := 0; b < rng.IntN(5); b++ {
				name := fmt.Sprintf("b-%d-%d", g, rng.IntN(1000))
				if _, dup := want[ga][name]; dup {
					continue
				}
				db, shoots := rng.IntN(limit+5), rng.IntN(limit+5)
				f.binding(name, ga, awsPool).instances(name, ga, db).shoots(name, ga, shoots)
				want[ga][name] = max(db, shoots)
			}
		}
		rows := DecideCandidates(f.tally(), limits(limit, nil))
		for ga, clusters := range want {
			if got, exp := choice(t, rows, ga, awsPool), adrChoice(clusters, limit); got != exp {
				t.Fatalf("seed %d, GA %s, limit %d, clusters %v: got %+v, want %+v", seed, ga, limit, clusters, got, exp)
			}
		}
	}
}
