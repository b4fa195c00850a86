// Package text cuts strings for log lines, rejection reasons, chat replies and provider
// payloads without splitting a character, so the result stays valid UTF-8 when the input is.
//
// Two limits exist and both are served here: a size bound in bytes (Truncate), for text whose
// cost is its size (a log line, a record kept in Redis), and a length in characters
// (TruncateRunes), for a provider that counts characters (PagerDuty's summary). A character
// here is a rune: a cut may still separate combining marks or the parts of an emoji sequence,
// but never the bytes of one rune.
package text

import "unicode/utf8"

// Ellipsis marks a cut.
const Ellipsis = "..."

// Truncate returns s when it is at most maxBytes bytes long. Otherwise it returns the longest
// prefix of s that is at most maxBytes bytes and ends on a rune boundary, followed by Ellipsis,
// which is not counted: the result has at most maxBytes+len(Ellipsis) bytes.
func Truncate(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	return s[:boundary(s, max(maxBytes, 0))] + Ellipsis
}

// boundary is the largest cut point i <= n (n < len(s)) that does not split a rune. A byte
// sequence that is not UTF-8 is cut at n: there is no character there to keep whole.
func boundary(s string, n int) int {
	for i := n; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if _, size := utf8.DecodeRuneInString(s[i:]); i+size > n {
				return i
			}
			return n
		}
	}
	return n
}

// TruncateRunes returns s when it has at most maxRunes runes. Otherwise it returns the first
// maxRunes-len(Ellipsis) runes of s followed by Ellipsis, which is counted: the result has
// exactly maxRunes runes. When maxRunes leaves no room for the ellipsis, the result is the first
// maxRunes runes alone.
func TruncateRunes(s string, maxRunes int) string {
	maxRunes = max(maxRunes, 0)
	keep, suffix := maxRunes-utf8.RuneCountInString(Ellipsis), Ellipsis
	if keep < 0 {
		keep, suffix = maxRunes, ""
	}
	cut, n := 0, 0
	for i := range s {
		if n == keep {
			cut = i
		}
		if n == maxRunes {
			return s[:cut] + suffix // s has more than maxRunes runes
		}
		n++
	}
	return s
}
