package model

import "strconv"

// Redis answers an integer as an integer, a stored number as a bulk string, and a Lua script
// renders a computed number with a fraction when it has one; the readers of every store package
// decode replies with these.

// Num is the integer of reply v, 0 when it holds none.
func Num(v any) int64 {
	n, _ := OptNum(v)
	return n
}

// OptNum is the integer of reply v (a fraction truncated, as Redis truncates it), and whether
// v held one.
func OptNum(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case []byte:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(string(x), 64)
			if ferr != nil {
				return 0, false
			}
			return int64(f), true
		}
		return n, true
	}
	return 0, false
}
