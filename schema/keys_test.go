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

// The staleness keys are documented in the README; their names are part of the contract.
func TestStaleKeys(t *testing.T) {
	k := NewKeys("fj:")
	if k.StaleDeadlines() != "fj:stale_deadlines" || k.StaleChecks() != "fj:stale_checks" {
		t.Fatalf("%q %q", k.StaleDeadlines(), k.StaleChecks())
	}
	e := StaleEntry{TTL: 300, Last: 1795575299, Tags: []string{"a \"b\""}}
	raw := string(e.AppendJSON(nil))
	if raw != `{"ttl":300,"last":1795575299,"tags":["a \"b\""]}` {
		t.Fatalf("entry %s", raw)
	}
	back, err := ParseStaleEntry([]byte(raw))
	if err != nil || back.TTL != 300 || back.Last != 1795575299 || len(back.Tags) != 1 || back.Tags[0] != `a "b"` {
		t.Fatalf("%+v %v", back, err)
	}
	if raw := string(StaleEntry{TTL: 60, Last: 7}.AppendJSON(nil)); raw != `{"ttl":60,"last":7}` {
		t.Fatalf("entry without tags %s", raw)
	}
}
