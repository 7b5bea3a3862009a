package hap

import (
	"slices"
	"strings"
)

// Label is one label of a binding.
type Label struct{ Key, Value string }

// Labels are a binding's labels, sorted by key. A binding carries two or
// three; held as a map they would take four times the memory, which a run
// keeps for every binding of the namespace (about 10 MB at 30,000).
type Labels []Label

// LabelsOf sorts labels into a Labels; no labels are nil.
func LabelsOf(labels map[string]string) Labels {
	if len(labels) == 0 {
		return nil
	}
	out := make(Labels, 0, len(labels))
	for k, v := range labels {
		out = append(out, Label{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b Label) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Get returns the value of key and whether the label is there.
func (l Labels) Get(key string) (string, bool) {
	i, found := slices.BinarySearchFunc(l, key, func(e Label, k string) int { return strings.Compare(e.Key, k) })
	if !found {
		return "", false
	}
	return l[i].Value, true
}

// Map returns the labels as a new map, never nil.
func (l Labels) Map() map[string]string {
	out := make(map[string]string, len(l))
	for _, e := range l {
		out[e.Key] = e.Value
	}
	return out
}

// Equal reports whether both hold the same labels.
func (l Labels) Equal(other Labels) bool { return slices.Equal(l, other) }
