package schema

import (
	"encoding/json"
	"strings"
)

// PerfdataItem is one `label=value` of Nagios performance data.
type PerfdataItem struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ParsePerfdata splits Nagios perfdata as Flapjack 1.x stores it in check:ID "perfdata"
// (docs/flapjack-1x.md 2.3): items separated by spaces, key and value split at '=', the value cut at the
// first ';' (`time=0.48s;;;0` -> {time, 0.48s}). Items without '=' are skipped.
func ParsePerfdata(s string) []PerfdataItem {
	var items []PerfdataItem
	for _, field := range strings.Fields(s) {
		key, value, ok := strings.Cut(field, "=")
		if !ok || key == "" {
			continue
		}
		value, _, _ = strings.Cut(value, ";")
		items = append(items, PerfdataItem{Key: key, Value: value})
	}
	return items
}

// PerfdataJSON is ParsePerfdata encoded as the JSON array stored in check:ID.
func PerfdataJSON(s string) string {
	items := ParsePerfdata(s)
	if items == nil {
		items = []PerfdataItem{}
	}
	b, _ := json.Marshal(items)
	return string(b)
}
