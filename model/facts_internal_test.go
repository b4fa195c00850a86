package model

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/schema"
)

// benchFactsReply is one check's reply as redigo hands it over for a failing check read in
// ModeEvent: bulk strings as []byte, Lua numbers as int64, false as nil.
func benchFactsReply() []any {
	b := func(s string) any { return []byte(s) }
	ts := func(n int64) any { return []byte(strconv.FormatInt(n, 10)) }
	const now = 1767607200
	return []any{
		b("critical"), ts(now - 600), ts(7), ts(now - 30), ts(41), ts(30), ts(60),
		nil, nil, nil,
		int64(now - 600), int64(now + 3000), ts(now - 600),
		ts(now - 500), nil, ts(now - 500), nil, ts(now - 7000), nil, nil,
		ts(now - 600), b("critical"), b("HTTP 500"), ts(now - 3600), b("warning"), b("slow"),
		nil, b("HTTP 500"), nil, int64(1),
		b("body: oops"), b("critical"), b("critical"),
	}
}

func BenchmarkDecodeFacts(b *testing.B) {
	r := FactsRequest{Entity: "app-01.example.com", Check: "HTTP", Mode: ModeEvent}
	v := benchFactsReply()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeFacts(r, v); err != nil {
			b.Fatal(err)
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
	args := factsArgs(schema.NewKeys("fj:"), time.Unix(1767607200, 0), 3)
	if len(args) != factsHeaderLen || cap(args) != factsHeaderLen+3*factsArgsPerCheck {
		t.Errorf("header of %d values (room for %d), want %d (%d)", len(args), cap(args),
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
