package rules

import "fmt"

// noEntry is the Index of a problem of the list as a whole (an empty list, a
// plan without an entry), which no single entry causes.
const noEntry = -1

// EntryError is one reason KEB refuses the list.
type EntryError struct {
	// Index is the entry's position in hap.rule, from 0, or noEntry.
	Index int
	// Entry is the entry as written ("" with noEntry).
	Entry string
	// Reason says what is wrong and, where it can, how to fix it.
	Reason string
}

func (e EntryError) Error() string {
	if e.Index == noEntry {
		return "hap.rule: " + e.Reason
	}
	return fmt.Sprintf("hap.rule[%d] %q: %s", e.Index, e.Entry, e.Reason)
}
