package rules

import "sort"

// Options are the parts of KEB's configuration the verdict and the evaluation
// depend on.
type Options struct {
	Providers Providers
	// RequiredPlans must each have an entry. KEB requires its enabled plans
	// (APP_BROKER_ENABLE_PLANS) at startup; its rule validator
	// (cmd/parser) requires none, which is the default here.
	RequiredPlans []string
}

// defaultOptions returns KEB's default providers and no required plans.
func defaultOptions() Options {
	return Options{Providers: DefaultProviders()}
}

// RuleSet is a list KEB accepts. The zero RuleSet applies to nothing.
type RuleSet struct {
	rules     []Rule
	providers Providers
	warnings  []EntryError
}

// Warnings are the entries KEB accepts but the job cannot follow fully, or
// that do not do what they seem to: an entry for a plan the job's plan table
// does not have, an entry naming "*" as an input value. One per entry, in
// list order; the commands log them at start.
func (rs RuleSet) Warnings() []EntryError {
	return append([]EntryError(nil), rs.warnings...)
}

// Rules returns the entries in list order.
func (rs RuleSet) Rules() []Rule {
	return append([]Rule(nil), rs.rules...)
}

// parse gives KEB's verdict on hap.rule with defaultOptions.
func parse(entries []string) (RuleSet, []EntryError) {
	return ParseWith(entries, defaultOptions())
}

// ParseWith gives KEB's verdict on hap.rule: the RuleSet when KEB accepts the
// list, else the zero RuleSet (KEB does not start) and one EntryError per bad
// entry, ordered by index, then the problems of the whole list. KEB stops at
// the first kind of problem it finds (syntax, duplicates, ambiguity, plans);
// this reports all of them, the first kind for each entry, so that one round
// of fixes is enough.
//
// A plan the job's plan table does not have is a warning, not a refusal
// (RuleSet.Warnings): KEB refuses plans outside its own PlanIDsMapping
// (checkPlans), so such an entry is either refused by KEB too, which then
// does not start, or written for a KEB newer than the table, which accepts
// it; in neither case may the job stop.
func ParseWith(entries []string, opts Options) (RuleSet, []EntryError) {
	bad := map[int]string{}
	var parsed []Rule
	for i, text := range entries {
		r, reason := parseEntry(i, text)
		if reason != "" {
			bad[i] = reason
			continue
		}
		parsed = append(parsed, r)
	}
	unique := rejectDuplicates(parsed, bad)
	rejectAmbiguous(unique, bad)

	errs := make([]EntryError, 0, len(bad))
	for i, reason := range bad {
		errs = append(errs, EntryError{Index: i, Entry: entries[i], Reason: reason})
	}
	sort.Slice(errs, func(a, b int) bool { return errs[a].Index < errs[b].Index })
	errs = append(errs, listProblems(entries, parsed, opts.RequiredPlans)...)
	if len(errs) > 0 {
		return RuleSet{}, errs
	}
	return RuleSet{rules: parsed, providers: opts.Providers, warnings: entryWarnings(parsed)}, nil
}
