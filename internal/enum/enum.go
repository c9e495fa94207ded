// Package enum words the closed sets of names the project keeps as typed
// constants (sender backends, receiver methods, patterns, searches, the
// irqbalance policy, a campaign's shortfall). Each set has one list, in
// the package that owns the concept; its validators, errors and flag help
// say that list through And and Or, so that no second list is written by
// hand and none drifts from the names the code accepts.
package enum

import "strings"

// And is names as a sentence joins them with "and": "a, b and c".
func And[T ~string](names []T) string { return join(names, "and") }

// Or is names as a sentence joins them with "or": "a, b or c".
func Or[T ~string](names []T) string { return join(names, "or") }

// Usage is names as a usage line offers them: "a|b|c".
func Usage[T ~string](names []T) string { return strings.Join(Strings(names), "|") }

// Strings is names as plain strings, for the edges that carry them so (a
// proto message, gossip tags, a flag's usage line); nil for nil.
func Strings[T ~string](names []T) []string {
	if names == nil {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = string(n)
	}
	return out
}

// Explain is every name followed by what meaning says of it, in
// brackets ("refuse (stop with advice)"), or alone where meaning says
// nothing: a list for And or Or to join.
func Explain[T ~string](names []T, meaning func(T) string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = string(n)
		if m := meaning(n); m != "" {
			out[i] += " (" + m + ")"
		}
	}
	return out
}

// join is names separated by commas, the last two by conj.
func join[T ~string](names []T, conj string) string {
	var b strings.Builder
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			b.WriteString(" " + conj + " ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(string(n))
	}
	return b.String()
}
