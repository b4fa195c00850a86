package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// StaleEntry is the value of a StaleChecks field: the ttl the check's latest real result set
// and the unix time it was applied (the check hash's last_update then), with the result's tags
// so a stale result is routed as the check's own results are.
type StaleEntry struct {
	TTL  int64    `json:"ttl"`
	Last int64    `json:"last"`
	Tags []string `json:"tags,omitempty"`
}

// AppendJSON appends the entry's JSON to b without reflection: every result with a ttl writes
// one.
func (e StaleEntry) AppendJSON(b []byte) []byte {
	b = append(b, `{"ttl":`...)
	b = strconv.AppendInt(b, e.TTL, 10)
	b = append(b, `,"last":`...)
	b = strconv.AppendInt(b, e.Last, 10)
	if len(e.Tags) > 0 {
		tags, _ := json.Marshal(e.Tags)
		b = append(b, `,"tags":`...)
		b = append(b, tags...)
	}
	return append(b, '}')
}

// ParseStaleEntry reads a StaleChecks value.
func ParseStaleEntry(raw []byte) (StaleEntry, error) {
	var e StaleEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("stale entry %.60q: %w", raw, err)
	}
	return e, nil
}
