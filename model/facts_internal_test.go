package model

import (
	"strconv"
	"testing"
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
