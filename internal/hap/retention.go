package hap

import "time"

// Retention is how long the job keeps the rows of its tables that nothing
// reads any more: what the landscape did is kept for this long, and no
// longer, whatever runs. Every other table is bounded by the landscape
// itself (one row per binding, per GA and pool, or per pick not yet seen),
// docs/operations.md#what-the-tables-hold.
type Retention struct {
	// ResolvedFindings keeps a drift finding for this long after it was
	// resolved; open findings are kept.
	ResolvedFindings time.Duration
	// ReleaseAudit keeps a release's audit rows for this long; open
	// intents are kept.
	ReleaseAudit time.Duration
	// ShadowHistory keeps the candidate table's closed versions, its
	// rewrites and the compared picks for this long: what the shadow job
	// compares (its window and the oldest table a pick accepts).
	ShadowHistory time.Duration
	// PoolHistory keeps the pools' samples for this long: the exhaustion
	// estimate reads the last ExhaustionWindow of them.
	PoolHistory time.Duration
}
