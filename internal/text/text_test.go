package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"ascii cut", "abcdefgh", 5, "abcde..."},
		{"empty", "", 0, ""},
		{"zero", "abc", 0, "..."},
		{"negative", "abc", -1, "..."},
		{"two-byte rune kept whole", "aébc", 2, "a..."}, // é is bytes 1 and 2
		{"two-byte rune fits", "aébc", 3, "aé..."},      // cut after é
		{"japanese mid-character", "障害発生", 4, "障..."},   // 3 bytes per character
		{"japanese on boundary", "障害発生", 6, "障害..."},
		{"japanese below one rune", "障害発生", 2, "..."},
		{"emoji mid-rune", "ok 😀😀", 5, "ok ..."}, // 😀 is bytes 3 to 6
		{"emoji three bytes in", "ok 😀😀", 6, "ok ..."},
		{"emoji on boundary", "ok 😀😀", 7, "ok 😀..."},
		{"emoji fits exactly", "ok 😀", 7, "ok 😀"},
		{"flag sequence", "🇯🇵🇯🇵", 6, "🇯..."},                              // one flag is two 4-byte runes
		{"invalid input cut where asked", "ab\xff\xfecd", 3, "ab\xff..."}, // nothing to keep whole
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Truncate(tt.in, tt.max)
			if got != tt.want {
				t.Fatalf("Truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if utf8.ValidString(tt.in) && !utf8.ValidString(got) {
				t.Errorf("Truncate(%q, %d) = %q: not valid UTF-8", tt.in, tt.max, got)
			}
			if got != tt.in {
				kept := strings.TrimSuffix(got, Ellipsis)
				if len(kept) > max(tt.max, 0) || !strings.HasPrefix(tt.in, kept) {
					t.Errorf("Truncate(%q, %d) kept %q: want a prefix of at most %d bytes", tt.in, tt.max, kept, tt.max)
				}
			}
		})
	}
}

func TestTruncateRunes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"ascii cut", "abcdefgh", 5, "ab..."},
		{"empty", "", 0, ""},
		{"no room for the ellipsis", "abcdef", 2, "ab"},
		{"only the ellipsis", "abcdef", 3, "..."},
		{"zero", "abc", 0, ""},
		{"negative", "abc", -4, ""},
		{"accents counted as characters", "éééééé", 5, "éé..."},
		{"accents fit", "ééééé", 5, "ééééé"},
		{"japanese", "監視システム障害発生", 6, "監視シ..."},
		{"emoji", "😀😀😀😀😀😀", 4, "😀..."},
		{"emoji fit", "😀😀😀😀", 4, "😀😀😀😀"},
		{"mixed", "a😀é障b", 4, "a..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := TruncateRunes(tt.in, tt.max)
			if got != tt.want {
				t.Fatalf("TruncateRunes(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("TruncateRunes(%q, %d) = %q: not valid UTF-8", tt.in, tt.max, got)
			}
			if n := utf8.RuneCountInString(got); n > max(tt.max, 0) {
				t.Errorf("TruncateRunes(%q, %d) has %d runes", tt.in, tt.max, n)
			}
		})
	}
}

// Every cut of a long mixed string, at every limit, is valid UTF-8 within its bound.
func TestTruncateEveryLimit(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("a é 障 😀 🇯🇵 ", 8)
	for n := -1; n <= len(s)+1; n++ {
		if got := Truncate(s, n); !utf8.ValidString(got) || len(strings.TrimSuffix(got, Ellipsis)) > max(n, 0) {
			t.Fatalf("Truncate(s, %d) = %q", n, got)
		}
		if got := TruncateRunes(s, n); !utf8.ValidString(got) || utf8.RuneCountInString(got) > max(n, 0) {
			t.Fatalf("TruncateRunes(s, %d) = %q", n, got)
		}
	}
}
