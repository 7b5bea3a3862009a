package hap

import (
	"cmp"
	"fmt"
	"slices"
)

// KEBChoice is KEB's own choice for one (GA, pool) group of candidate rows,
// on KEB's measure alone: for a GA with limits, the binding with the most
// active instances of the GA's own still below its limit, ties to the first
// name (selectBindingBelowLimit in resolve_credentials_binding.go); the
// job's shoot counts play no part. For every other group it is the job's
// choice, which already follows KEB's measure there.
func KEBChoice(rows []Candidate) Choice {
	if len(rows) == 0 || rows[0].Guarded || rows[0].Limit == nil {
		return Choose(rows)
	}
	byName := slices.Clone(rows)
	// Go compares strings byte by byte: the order the API server lists in.
	slices.SortFunc(byName, func(a, b Candidate) int { return cmp.Compare(a.BindingName, b.BindingName) })
	best, bestCount := "", -1
	for _, r := range byName {
		if r.DBCount < *r.Limit && r.DBCount > bestCount {
			best, bestCount = r.BindingName, r.DBCount
		}
	}
	if best == "" {
		return Choice{ClaimNew: true}
	}
	return Choice{Binding: best}
}

// Deviation is a (GA, pool) whose rank 1 differs from KEB's own choice, and
// why. Both rank by the GA's own active instances; they part only where
// Gardener shows KEB's choice at or above its limit in shoots, which the job
// treats as full: KEB would fill that account past its limit.
type Deviation struct {
	GlobalAccountID string
	Pool            Pool
	Job, KEB        Choice
	Reason          string
}

// RankOneDeviations compares, for every (GA, pool) of the candidate rows
// (as DecideCandidates orders them), the job's rank 1 with KEBChoice.
func RankOneDeviations(rows []Candidate) []Deviation {
	var out []Deviation
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && rows[end].GlobalAccountID == rows[start].GlobalAccountID && rows[end].Pool == rows[start].Pool {
			end++
		}
		group := rows[start:end]
		start = end
		job, keb := Choose(group), KEBChoice(group)
		if job == keb {
			continue
		}
		out = append(out, Deviation{
			GlobalAccountID: group[0].GlobalAccountID,
			Pool:            group[0].Pool,
			Job:             job,
			KEB:             keb,
			Reason:          deviationReason(group, job, keb),
		})
	}
	return out
}

func deviationReason(group []Candidate, job, keb Choice) string {
	reason := fmt.Sprintf("the job picks %s, KEB's database-only count picks %s", job, keb)
	for _, r := range group {
		if r.BindingName == keb.Binding && r.Limit != nil && r.ShootCount >= *r.Limit {
			reason += fmt.Sprintf("; binding %s has %d shoot(s) in Gardener, at or above its limit %d, while KEB counts %d active instance(s) of the GA on it: KEB would fill the account past its limit",
				r.BindingName, r.ShootCount, *r.Limit, r.DBCount)
		}
	}
	return reason
}
