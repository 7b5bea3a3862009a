package resolvecost

import "testing"

// Every path goes first once in four rounds and follows every other path
// exactly once within them, so no path always comes after the costly one.
func TestRoundOrdersAreBalanced(t *testing.T) {
	first := map[int]int{}
	follows := map[[2]int]int{}
	for round := range paths {
		order := roundOrder(round)
		first[order[0]]++
		seen := map[int]bool{}
		for k, path := range order {
			if seen[path] {
				t.Fatalf("round %d takes %s twice: %v", round, pathNames[path], order)
			}
			seen[path] = true
			if k > 0 {
				follows[[2]int{order[k-1], path}]++
			}
		}
	}
	for a := range paths {
		if first[a] != 1 {
			t.Errorf("%s goes first in %d of %d rounds, want 1", pathNames[a], first[a], paths)
		}
		for b := range paths {
			if a != b && follows[[2]int{a, b}] != 1 {
				t.Errorf("%s follows %s %d times in %d rounds, want 1", pathNames[b], pathNames[a], follows[[2]int{a, b}], paths)
			}
		}
	}
}
