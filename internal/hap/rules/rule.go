package rules

import "strings"

// Rule is one parsed entry of hap.rule.
type Rule struct {
	// Index is the entry's position in the list, from 0.
	Index int
	// Text is the entry as written.
	Text string
	Plan string
	// PlatformRegion and HyperscalerRegion are the input values; "" means the
	// entry does not name the attribute and so applies to any region. "*" is
	// an ordinary value here, as it is in KEB today (see the package comment).
	PlatformRegion    string
	HyperscalerRegion string
	// Shared (S) and EUAccess (EU) are the labels the pool's bindings carry.
	Shared   bool
	EUAccess bool
	// AppendPlatformRegion (output PR) and AppendHyperscalerRegion (output HR)
	// append the runtime's region to the hyperscalerType.
	AppendPlatformRegion    bool
	AppendHyperscalerRegion bool
}

// openInputs counts the input attributes the rule leaves open: the fewer, the
// more specific the rule, and the earlier KEB tries it (MatchAnyCount in KEB's
// ruleset.go).
func (r Rule) openInputs() int {
	n := 0
	if r.PlatformRegion == "" {
		n++
	}
	if r.HyperscalerRegion == "" {
		n++
	}
	return n
}

// star is the input value KEB once read as a wildcard and now compares like
// any other (PatternAttribute.Match in common/hyperscaler/rules/ruleset.go:
// only an absent input matches any region), so only a runtime whose region
// is the text "*" meets it, and no real runtime does.
const star = "*"

// starInputs returns the inputs the entry gives the value "*", as written
// (PR=*, HR=*).
func (r Rule) starInputs() []string {
	var attrs []string
	if r.PlatformRegion == star {
		attrs = append(attrs, attrPlatformRegion+"="+star)
	}
	if r.HyperscalerRegion == star {
		attrs = append(attrs, attrHyperscalerRegion+"="+star)
	}
	return attrs
}

// Reachable reports whether a real runtime can meet the entry's inputs: false
// when one of them is "*" (see starInputs).
func (r Rule) Reachable() bool { return len(r.starInputs()) == 0 }

// applies reports whether the rule's inputs select a runtime in these regions;
// the plan is compared by the caller.
func (r Rule) applies(platformRegion, hyperscalerRegion string) bool {
	return (r.PlatformRegion == "" || r.PlatformRegion == platformRegion) &&
		(r.HyperscalerRegion == "" || r.HyperscalerRegion == hyperscalerRegion)
}

// inputs is what tells two rules apart: outputs never do (KEB's keyString).
type inputs struct {
	plan, platformRegion, hyperscalerRegion string
}

func (r Rule) inputs() inputs {
	return inputs{r.Plan, r.PlatformRegion, r.HyperscalerRegion}
}

// String writes the inputs in the entry syntax, as an operator would type them.
func (in inputs) String() string {
	var attrs []string
	if in.platformRegion != "" {
		attrs = append(attrs, "PR="+in.platformRegion)
	}
	if in.hyperscalerRegion != "" {
		attrs = append(attrs, "HR="+in.hyperscalerRegion)
	}
	if len(attrs) == 0 {
		return in.plan
	}
	return in.plan + "(" + strings.Join(attrs, ", ") + ")"
}

// hyperscalerType builds the pool's hyperscalerType for a runtime.
func (r Rule) hyperscalerType(providerType, platformRegion, hyperscalerRegion string) string {
	ht := providerType
	if r.AppendPlatformRegion {
		ht += "_" + platformRegion
	}
	if r.AppendHyperscalerRegion {
		ht += "_" + hyperscalerRegion
	}
	return ht
}
