// Package jsonfield holds what the strict readers of import files (packages importer and oncall)
// share: telling what a raw JSON value is before decoding it, and naming the field a problem is
// about ("layers[0].members[1]").
package jsonfield

import (
	"bytes"
	"strconv"
)

// IsNull tells whether a raw JSON value is absent (empty) or null.
func IsNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// First is the first byte of a JSON value, which tells its type (0 when there is none).
func First(raw []byte) byte {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

// Join names field inside prefix ("media" and "sms" make "media.sms"; no prefix, the field).
func Join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}

// At names element i of an array field ("layers", 0 make "layers[0]").
func At(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }
