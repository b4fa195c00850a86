package humantime

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want time.Duration
	}{
		{"90", 90 * time.Second},
		{"0", 0},
		{"90s", 90 * time.Second},
		{"720h", 720 * time.Hour},
		{"1h30m", 90 * time.Minute},
		{"15 minutes", 15 * time.Minute},
		{"1 day", 24 * time.Hour},
		{"2h", 2 * time.Hour},
		{"90 minutes", 90 * time.Minute},
		{"an hour and 30 minutes", 90 * time.Minute},
		{"1 hour, 30 mins", 90 * time.Minute},
		{"1.5 hours", 90 * time.Minute},
		{"2 Weeks", 14 * 24 * time.Hour},
		{"100 years", time.Duration(100 * 365.25 * 24 * float64(time.Hour))},
		{"0 seconds", 0},
		{"  4 hours ", 4 * time.Hour},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Parse(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "soon", "5 fortnights", "-5", "-5s", "hours", "1000 years", "3 3 hours",
		"nan years", "NaN Y", "inf days", "infinity hours", "0x10 hours"} {
		if d, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, d)
		}
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   time.Duration
		want string
	}{
		{0, "0 seconds"},
		{time.Second, "1 second"},
		{4 * time.Hour, "4 hours"},
		{26*time.Hour + 3*time.Minute + 4*time.Second, "1 day, 2 hours, 3 minutes, 4 seconds"},
		{2*time.Hour + 1*time.Second, "2 hours, 1 second"},
	}
	for _, c := range cases {
		if got := Words(c.in); got != c.want {
			t.Errorf("Words(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzParse: no input crashes Parse or yields a negative duration, and Words never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"90", "90s", "15 minutes", "an hour and 30 minutes", "1.5 hours", "100 years", "2h", "-", "1e400 days"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err == nil && d < 0 {
			t.Fatalf("Parse(%q) = %v", s, d)
		}
		_ = Words(d)
	})
}
