package hap

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Shadow outcomes: a pick KEB made, compared with what the candidate table
// would have answered at that moment.
const (
	// ShadowAgree: the table names the binding KEB took, or says to claim
	// a new one where KEB claimed one.
	ShadowAgree = "agree"
	// ShadowDeviation: KEB took a binding Gardener showed at or above its
	// limit in shoots; the table counts it full (the job's one deviation).
	ShadowDeviation = "deviation"
	// ShadowClaim: KEB took a binding the table did not list for the GA
	// and pool (claimed or relabelled since the table's snapshot).
	ShadowClaim = "claim"
	// ShadowDrift: both knew the binding and still parted: the table's
	// counts and KEB's live ones disagreed.
	ShadowDrift = "drift"
	// ShadowSharedOrder: in a shared pool the table's least used binding
	// was another than KEB's. KEB counts the shoots at that moment; the
	// table counts them at its snapshot plus the placements since, so a
	// shoot deleted since can change the order. Harmless: both are in the
	// pool, neither is ever claimed or filled past a limit.
	ShadowSharedOrder = "shared_order"
	// ShadowStaleness: the table was older than the maximum age; NextBinding
	// would have refused and KEB would have taken its own choice.
	ShadowStaleness = "staleness"
)

// ShadowOutcomes lists every outcome, agreement first.
var ShadowOutcomes = []string{ShadowAgree, ShadowDeviation, ShadowClaim, ShadowDrift, ShadowSharedOrder, ShadowStaleness}

// CandidateVersion is one candidate row as the table held it from ValidFrom
// until ValidTo (zero: it still does).
type CandidateVersion struct {
	Candidate
	ValidFrom, ValidTo time.Time
}

func (v CandidateVersion) heldAt(t time.Time) bool {
	return !v.ValidFrom.After(t) && (v.ValidTo.IsZero() || t.Before(v.ValidTo))
}

// Rewrite is one rewrite of the candidate table: when it was committed and
// when the snapshot it was computed from was taken.
type Rewrite struct {
	WrittenAt, SnapshotAt time.Time
}

// KEBPick is one instance KEB placed: the binding it wrote into the row and
// when it created the row, with the group (GA, or "" for a shared pool, and
// pool) the binding's labels put it in.
type KEBPick struct {
	InstanceID      string
	GlobalAccountID string
	Pool            Pool
	BindingName     string
	At              time.Time
	// Compared: the pick has a result already; it is replayed only for the
	// reservation the table would have made for it.
	Compared bool
}

// ShadowResult is one pick, compared.
type ShadowResult struct {
	InstanceID      string
	GlobalAccountID string
	Pool            Pool
	KEBBinding      string
	// Table is the table's answer: a binding, "claim new" or "guarded";
	// "" when it was too old to answer.
	Table      string
	Outcome    string
	Detail     string
	At         time.Time
	SnapshotAt time.Time
}

// CompareShadow replays, for every (GA, pool), KEB's picks in the order KEB
// made them against the candidate table as it stood at each moment, the way
// NextBinding would have answered had KEB called it: the rows the table held
// then, plus a reservation for every pick since the table's snapshot (on the
// binding the table would have named) and a claimed row where the table
// would have said to claim a new binding and KEB claimed one. It returns a
// result for every pick not yet Compared. Picks before the first rewrite
// have no table to compare with and are left out. versions need hold only
// the groups GroupsToCompare names: the others give no result.
func CompareShadow(picks []KEBPick, versions []CandidateVersion, rewrites []Rewrite, maxAge time.Duration) []ShadowResult {
	rows := map[ShadowGroup][]CandidateVersion{}
	for _, v := range versions {
		k := ShadowGroup{v.GlobalAccountID, v.Pool}
		rows[k] = append(rows[k], v)
	}
	rewrites = slices.SortedFunc(slices.Values(rewrites), func(a, b Rewrite) int { return a.WrittenAt.Compare(b.WrittenAt) })
	byGroup := map[ShadowGroup][]KEBPick{}
	var order []ShadowGroup
	for _, p := range picks {
		k := p.group()
		if _, seen := byGroup[k]; !seen {
			order = append(order, k)
		}
		byGroup[k] = append(byGroup[k], p)
	}
	var out []ShadowResult
	for _, k := range order {
		g := shadowGroup{rows: rows[k], rewrites: rewrites, maxAge: maxAge}
		out = append(out, g.replay(byGroup[k])...)
	}
	return out
}

// ShadowGroup is a GA ("" for a shared pool) and pool: the candidate rows
// one pick chooses among, and the picks replayed together against them.
type ShadowGroup struct {
	GlobalAccountID string
	Pool            Pool
}

func (p KEBPick) group() ShadowGroup { return ShadowGroup{p.GlobalAccountID, p.Pool} }

// GroupsToCompare names, in name order, the groups holding a pick not yet
// compared: CompareShadow reads the table's history of these alone, so a
// run need not hold the whole table's, which at 30,000 bindings is
// megabytes.
func GroupsToCompare(picks []KEBPick) []ShadowGroup {
	var out []ShadowGroup
	for _, p := range picks {
		if !p.Compared {
			out = append(out, p.group())
		}
	}
	slices.SortFunc(out, func(a, b ShadowGroup) int {
		return cmp.Or(cmp.Compare(a.GlobalAccountID, b.GlobalAccountID), cmp.Compare(a.Pool.HyperscalerType, b.Pool.HyperscalerType),
			cmp.Compare(a.Pool.String(), b.Pool.String()))
	})
	return slices.Compact(out)
}

// shadowGroup replays the picks of one (GA, pool).
type shadowGroup struct {
	rows     []CandidateVersion
	rewrites []Rewrite
	maxAge   time.Duration
	// answered holds the earlier picks with the table's answer for each.
	answered []answeredPick
}

type answeredPick struct {
	at       time.Time
	choice   Choice
	keb      string
	answered bool // false: the table was too old to answer
}

func (g *shadowGroup) replay(picks []KEBPick) []ShadowResult {
	slices.SortStableFunc(picks, func(a, b KEBPick) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.InstanceID, b.InstanceID))
	})
	var out []ShadowResult
	for _, p := range picks {
		rewrite, ok := g.rewriteAt(p.At)
		if !ok {
			continue
		}
		r := ShadowResult{InstanceID: p.InstanceID, GlobalAccountID: p.GlobalAccountID, Pool: p.Pool,
			KEBBinding: p.BindingName, At: p.At, SnapshotAt: rewrite.SnapshotAt}
		if age := p.At.Sub(rewrite.SnapshotAt); age > g.maxAge {
			r.Outcome = ShadowStaleness
			r.Detail = fmt.Sprintf("the table was %s old, more than %s: NextBinding refuses and KEB takes its own choice", age.Round(time.Second), g.maxAge)
			g.answered = append(g.answered, answeredPick{at: p.At, keb: p.BindingName})
		} else {
			rows := g.rowsAt(p.At, rewrite.SnapshotAt)
			choice := shadowChoose(rows)
			r.Table = choice.String()
			r.Outcome, r.Detail = shadowVerdict(rows, choice, p.BindingName)
			g.answered = append(g.answered, answeredPick{at: p.At, choice: choice, keb: p.BindingName, answered: true})
		}
		if !p.Compared {
			out = append(out, r)
		}
	}
	return out
}

// rewriteAt is the last rewrite committed at or before t.
func (g *shadowGroup) rewriteAt(t time.Time) (Rewrite, bool) {
	i := sort.Search(len(g.rewrites), func(i int) bool { return g.rewrites[i].WrittenAt.After(t) })
	if i == 0 {
		return Rewrite{}, false
	}
	return g.rewrites[i-1], true
}

// shadowRow is a row as a pick would have seen it.
type shadowRow struct {
	Candidate
	reserved int
	claimed  bool // a row the table would have listed after a claim
}

// rowsAt is the group's rows at t with what the table would have reserved
// and claimed for the picks made since its snapshot.
func (g *shadowGroup) rowsAt(t, snapshotAt time.Time) []shadowRow {
	var rows []shadowRow
	for _, v := range g.rows {
		if v.heldAt(t) {
			rows = append(rows, shadowRow{Candidate: v.Candidate})
		}
	}
	// A claimed binding gets the limit KEB applies in the pool, the one its
	// other rows carry.
	maxRank, limit := 0, (*int)(nil)
	for _, r := range rows {
		maxRank = max(maxRank, r.Rank)
		if r.Limit != nil {
			limit = r.Limit
		}
	}
	for _, a := range g.answered {
		if !a.at.After(snapshotAt) || !a.answered {
			continue
		}
		name := a.choice.Binding
		if a.choice.ClaimNew {
			name = a.keb // KEB claims and records the binding it took
		}
		if name == "" {
			continue
		}
		i := slices.IndexFunc(rows, func(r shadowRow) bool { return r.BindingName == name })
		if i < 0 {
			maxRank++
			rows = append(rows, shadowRow{Candidate: Candidate{BindingName: name, Selectable: true, Rank: maxRank, Limit: limit}, claimed: true})
			i = len(rows) - 1
		}
		rows[i].reserved++
	}
	return rows
}

// shadowChoose answers as NextBinding's statement does.
func shadowChoose(rows []shadowRow) Choice {
	var open []shadowRow
	for _, r := range rows {
		if r.Guarded {
			return Choice{Guarded: true}
		}
		if r.Selectable && (r.Limit == nil || r.EffectiveCount+r.reserved < *r.Limit) {
			open = append(open, r)
		}
	}
	if len(open) == 0 {
		return Choice{ClaimNew: true}
	}
	best := slices.MinFunc(open, func(a, b shadowRow) int {
		if a.GlobalAccountID == "" && !a.claimed { // a shared pool spreads
			return cmp.Or(cmp.Compare(a.EffectiveCount+a.reserved, b.EffectiveCount+b.reserved), cmp.Compare(a.BindingName, b.BindingName))
		}
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.BindingName, b.BindingName))
	})
	return Choice{Binding: best.BindingName}
}

// shadowVerdict compares the table's choice with the binding KEB took.
func shadowVerdict(rows []shadowRow, table Choice, keb string) (outcome, detail string) {
	i := slices.IndexFunc(rows, func(r shadowRow) bool { return r.BindingName == keb })
	switch {
	case table.Binding == keb && keb != "":
		return ShadowAgree, ""
	case i < 0 && table.ClaimNew:
		return ShadowAgree, ""
	case i < 0:
		return ShadowClaim, fmt.Sprintf("KEB took %s, which the table did not list for the global account and pool; the table answers %s", keb, table)
	}
	r := rows[i]
	if r.GlobalAccountID == "" && !r.claimed && table.Binding != "" {
		return ShadowSharedOrder, fmt.Sprintf("KEB took %s, the table's least used binding of the shared pool is %s (the table counts %s with %d shoot(s) at its snapshot)",
			keb, table.Binding, keb, r.ShootCount)
	}
	// The deviation: KEB's count left room, Gardener's shoots did not.
	if r.Limit != nil && r.ShootCount >= *r.Limit && r.DBCount < *r.Limit {
		return ShadowDeviation, fmt.Sprintf("KEB took %s with %d shoot(s) in Gardener, at or above its limit %d (KEB counts %d instance(s)); the table answers %s",
			keb, r.ShootCount, *r.Limit, r.DBCount, table)
	}
	return ShadowDrift, fmt.Sprintf("KEB took %s, which the table counts %d instance(s) and %d shoot(s) (limit %s, rank %d); the table answers %s",
		keb, r.DBCount, r.ShootCount, limitText(r.Limit), r.Rank, table)
}

func limitText(limit *int) string {
	if limit == nil {
		return "none"
	}
	return fmt.Sprint(*limit)
}

// ShadowInput is what the shadow job compares: KEB's placed instances since
// a moment, and the candidate table's rewrites from shortly before then on.
// The table's rows over that time are read apart, for the groups the picks
// fall in (GroupsToCompare).
type ShadowInput struct {
	Placed   []PlacedInstance
	Rewrites []Rewrite
	// EventsReadable: KEB's operations and events could be read, so picks
	// are timed by KEB's resolve step where its events still say when.
	EventsReadable bool
}

// PlacedInstance is an instance row KEB wrote with its binding: the owning
// GA (subscription_global_account_id when set, else global_account_id),
// the binding KEB resolved and the moment it did.
type PlacedInstance struct {
	InstanceID      string
	GlobalAccountID string
	BindingName     string
	// At is the moment KEB picked: when its resolve step ran, where KEB's
	// events say so (ByResolveStep), else the provision request.
	At            time.Time
	ByResolveStep bool
	Compared      bool
}

// KEBPicksOf puts each placed instance in the group the binding's labels
// say KEB picked it from: the shared pool (GA "") for a shared binding, the
// owning GA's pool otherwise. Instances whose binding the snapshot does not
// hold cannot be placed in a pool and are counted in unplaced.
func KEBPicksOf(placed []PlacedInstance, bindings []Binding) (picks []KEBPick, unplaced int) {
	if len(placed) == 0 {
		return nil, 0 // a quiet window: no index of every binding
	}
	byName := make(map[string]*Binding, len(bindings))
	for i := range bindings {
		byName[bindings[i].Name] = &bindings[i]
	}
	for _, p := range placed {
		b := byName[p.BindingName]
		if b == nil || b.OutOfPool != "" {
			unplaced++
			continue
		}
		ga := p.GlobalAccountID
		if b.Shared {
			ga = ""
		}
		picks = append(picks, KEBPick{InstanceID: p.InstanceID, GlobalAccountID: ga, Pool: b.Pool, BindingName: p.BindingName,
			At: p.At, Compared: p.Compared})
	}
	return picks, unplaced
}

// ShadowTally counts compared picks by outcome.
type ShadowTally map[string]int

// Picks is every compared pick.
func (t ShadowTally) Picks() int {
	n := 0
	for _, c := range t {
		n += c
	}
	return n
}
