package kebrules

import "slices"

// Decision is what KEB does for one provisioning.
type Decision struct {
	Binding string
	// ClaimNew: no binding of the GA is below its limit (or it holds none);
	// KEB claims a free one (claimNewCredentialsBinding).
	ClaimNew bool
	// Guarded: the GA holds at least MinBindingsForGuard bindings and none
	// has an instance; KEB fails the provisioning.
	Guarded bool
	// NoBinding: a shared pool without a binding; KEB fails the
	// provisioning (getSharedCredentialsName), it never claims.
	NoBinding bool
}

func (d Decision) String() string {
	switch {
	case d.Guarded:
		return "guarded"
	case d.NoBinding:
		return "no shared binding"
	case d.ClaimNew:
		return "claim new"
	}
	return d.Binding
}

// Seen is what KEB's decision rests on.
type Seen struct {
	// Held lists the bindings KEB's selector returned, in list order.
	Held []string
	// Counts is KEB's count of the GA's active instances per binding, or,
	// for a shared pool, the shoots naming each binding.
	Counts map[string]int
	// Limit is the GA's limit; 0 for a GA off the allowlist (no limit).
	Limit int
}

// Verdict is KEB's decision with what it saw.
type Verdict struct {
	Decision
	Seen
}

// Decide is KEB's decision for a pool that is not shared: off the
// allowlist the first binding; on it resolveWithMultiAccountSupport's
// guard, then selectBindingBelowLimit: the most populated binding below
// the limit, ties to the first in list order; none: claim a new one.
func Decide(s Seen, minBindingsForGuard int) Decision {
	if len(s.Held) == 0 {
		return Decision{ClaimNew: true}
	}
	if s.Limit == 0 {
		return Decision{Binding: s.Held[0]}
	}
	if minBindingsForGuard > 0 && len(s.Held) >= minBindingsForGuard &&
		!slices.ContainsFunc(s.Held, func(n string) bool { return s.Counts[n] > 0 }) {
		return Decision{Guarded: true}
	}
	selected, selectedCount := "", -1
	for _, n := range s.Held {
		if c := s.Counts[n]; c < s.Limit && c > selectedCount {
			selected, selectedCount = n, c
		}
	}
	if selected == "" {
		return Decision{ClaimNew: true}
	}
	return Decision{Binding: selected}
}

// LeastUsed is GetLeastUsedCredentialsBindingFromSecretBindings: the
// binding the fewest shoots name, strictly fewer to displace the first in
// list order; "" when s holds none.
func LeastUsed(s Seen) string {
	if len(s.Held) == 0 {
		return ""
	}
	at := s.Held[0]
	for _, n := range s.Held {
		if s.Counts[n] < s.Counts[at] {
			at = n
		}
	}
	return at
}
