package checkstate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// benchFactsReply is one check's reply, packed as check_facts.lua packs it, for a failing check
// read in ModeEvent, as redigo hands it over.
func benchFactsReply() []byte {
	ts := func(n int64) string { return strconv.FormatInt(n, 10) }
	const now = 1767607200
	values := []string{
		"critical", ts(now - 600), ts(7), ts(now - 30), ts(41), ts(30), ts(60),
		"", "", "",
		ts(now - 600), ts(now + 3000), ts(now - 600),
		ts(now - 500), "", ts(now - 500), "", ts(now - 7000), "", "",
		ts(now - 600), "critical", "HTTP 500", ts(now - 3600), "warning", "slow",
		"", "HTTP 500", "", ts(1),
		"body: oops", "critical", "critical", ts(0),
	}
	return []byte(strings.Join(values, factsSeparator))
}

// BenchmarkDecodeFacts guards the reply parsing of one check's facts: one copy of the reply,
// which the values share, and the two-entry history.
func BenchmarkDecodeFacts(b *testing.B) {
	r := FactsRequest{Entity: "app-01.example.com", Check: "HTTP", Mode: ModeEvent}
	reply := benchFactsReply()
	var v factsValues
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := v.set(reply); !ok || err != nil {
			b.Fatal(ok, err)
		}
		if f := decodeFacts(r, &v); f.Revision != 7 || len(f.History) != 2 || f.Details != "body: oops" {
			b.Fatalf("decoded %+v", f)
		}
	}
}

// TestFactsValuesMalformed: a packed reply whose separators do not add up is refused (then read
// again unpacked); a reply of another shape is an error.
func TestFactsValuesMalformed(t *testing.T) {
	full := benchFactsReply()
	var v factsValues
	short := []byte("\x1eok\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f")
	if ok, err := v.set(short); !ok || err != nil || v[slotState] != "ok" {
		t.Fatalf("short reply: ok %v, error %v, state %q", ok, err, v[slotState])
	}
	for _, reply := range [][]byte{nil, full[:20], append([]byte("a\x1fb"), full...), append(short, "\x1f"...), short[:5]} {
		if ok, err := v.set(reply); ok || err != nil {
			t.Errorf("%.30q...: ok %v, error %v; want a refusal", reply, ok, err)
		}
	}
	for _, reply := range []any{int64(3), []any{[]byte("ok")}} {
		if _, err := v.set(reply); err == nil {
			t.Errorf("%v: no error", reply)
		}
	}
}

// TestFactsLayout checks the tables against their constants, that the script uses every name
// and that factsArgs fills the whole header.
func TestFactsLayout(t *testing.T) {
	pos, err := factsPositions()
	if err != nil {
		t.Fatal(err)
	}
	for name := range pos {
		if !strings.Contains(checkFactsSource, "${"+name+"}") {
			t.Errorf("the script never uses ${%s}", name)
		}
	}
	if _, err := expandFacts("r[${no_such_slot}]"); err == nil {
		t.Error("an unknown name expanded")
	}
	args := factsArgs(schema.NewKeys("fj:"), time.Unix(1767607200, 0), 3)[model.ScriptHead:]
	if len(args) != factsHeaderLen || cap(args) < factsHeaderLen+3*factsArgsPerCheck {
		t.Errorf("header of %d values (room for %d), want %d (room for at least %d)", len(args), cap(args),
			factsHeaderLen, factsHeaderLen+3*factsArgsPerCheck)
	}
	for i, a := range args {
		if a == nil {
			t.Errorf("header value %d is not set", i+1)
		}
	}
}

// TestFactsScriptComment compares the lists in the script's head comment with the tables: a
// section starts with "-- TITLE", each entry is "--   name" or "--   name[width]" (then an
// optional description), continuation lines are indented further.
func TestFactsScriptComment(t *testing.T) {
	entry := regexp.MustCompile(`^--   ([a-z_]+)(?:\[(\d+)\])?(?:\s|$)`)
	lines := strings.Split(checkFactsSource, "\n")
	for _, table := range factsTables {
		var want []string
		for _, n := range table.names {
			if n.width == 1 {
				want = append(want, n.name)
			} else {
				want = append(want, fmt.Sprintf("%s[%d]", n.name, n.width))
			}
		}
		var got []string
		found := false
		for _, line := range lines {
			if !found {
				found = strings.HasPrefix(line, "-- "+table.title)
				continue
			}
			if m := entry.FindStringSubmatch(line); m != nil {
				if m[2] != "" {
					got = append(got, m[1]+"["+m[2]+"]")
				} else {
					got = append(got, m[1])
				}
			} else if !strings.HasPrefix(line, "--    ") {
				break
			}
		}
		if !found {
			t.Errorf("no %q section in the head comment", table.title)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the script lists\n%v\nfacts_layout.go has\n%v", table.title, got, want)
		}
	}
}
