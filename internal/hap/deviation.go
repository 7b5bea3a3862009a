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
// why: the job counts a binding's shoots when they outnumber the GA's
// instances in KEB's database, so a cluster KEB's table does not show yet
// still takes its place. It only ever keeps an account from being filled
// past its limit.
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
		if r.ShootCount > r.DBCount && (r.BindingName == keb.Binding || r.BindingName == job.Binding) {
			reason += fmt.Sprintf("; binding %s has %d shoot(s) in Gardener but %d active instance(s) of the GA in KEB's database, and the job counts the larger",
				r.BindingName, r.ShootCount, r.DBCount)
		}
	}
	return reason
}
