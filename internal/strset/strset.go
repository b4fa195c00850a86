// Package strset holds the two string-list helpers the domain packages share: a list as a set
// for membership tests, and a list without repeats in first-seen order.
package strset

// Of returns the members of items as a set.
func Of(items []string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, s := range items {
		m[s] = true
	}
	return m
}

// Unique returns items without repeats, in first-seen order; items itself is left unchanged.
func Unique(items []string) []string {
	seen := make(map[string]bool, len(items))
	out := items[:0:0]
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
