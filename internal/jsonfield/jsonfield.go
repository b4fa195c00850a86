// Package jsonfield holds the small helpers that the readers of operators' JSON records (the
// importer's contacts, entities and rules; oncall's schedules) share: telling a JSON value's
// type before decoding it, and naming the field a problem is about ("layers[0].members") the
// same way in every problem report.
package jsonfield

import (
	"bytes"
	"strconv"
)

// IsNull tells whether raw is absent or JSON null.
func IsNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// First is the first byte of a JSON value, which tells its type ('{', '[', '"', ...; 0 when
// raw is empty).
func First(raw []byte) byte {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

// Join names field inside prefix ("" for a top-level field).
func Join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}

// At names the element i of the list field.
func At(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }
