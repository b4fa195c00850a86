package schema

import "testing"

// Scripts build per-timestamp keys from StateHistoryPrefix and a suffix; they must name the
// same keys as the builders Go uses.
func TestStateHistorySuffixes(t *testing.T) {
	for _, prefix := range []string{"", "fj:"} {
		k := NewKeys(prefix)
		const id, at = "app-01.example.com:HTTP", 1767607200
		for _, c := range []struct{ built, appended string }{
			{k.StateAt(id, at), k.StateHistoryPrefix(id) + "1767607200" + StateAtSuffix},
			{k.SummaryAt(id, at), k.StateHistoryPrefix(id) + "1767607200" + SummaryAtSuffix},
			{k.StateAt(id, at), prefix + "app-01.example.com:HTTP:1767607200:state"},
			{k.SummaryAt(id, at), prefix + "app-01.example.com:HTTP:1767607200:summary"},
		} {
			if c.built != c.appended {
				t.Errorf("prefix %q: %q != %q", prefix, c.built, c.appended)
			}
		}
	}
}
