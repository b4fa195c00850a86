// Package humantime reads and writes durations the way people type them in configs, chat and
// the CLI: integer seconds ("90"), Go durations ("90s", "720h") and Flapjack's words
// ("15 minutes", "1 day", "2h", "an hour and 30 minutes", "100 years").
package humantime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

const (
	day  = 24 * time.Hour
	week = 7 * day
	// Flapjack (chronic_duration) counts a year as 365.25 days and a month as 30 days.
	year  = time.Duration(365.25 * float64(day))
	month = 30 * day
)

var units = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": day, "day": day, "days": day,
	"w": week, "wk": week, "wks": week, "week": week, "weeks": week,
	"mo": month, "month": month, "months": month,
	"y": year, "yr": year, "yrs": year, "year": year, "years": year,
}

// maxDuration keeps parsed values inside time.Duration (about 292 years).
const maxDuration = time.Duration(1<<63 - 1)

// Parse reads a duration. A bare integer is seconds.
func Parse(s string) (time.Duration, error) {
	text := strings.TrimSpace(strings.ToLower(s))
	if text == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		if n < 0 || n > int64(maxDuration/time.Second) {
			return 0, fmt.Errorf("duration %q is out of range", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	if d, err := time.ParseDuration(text); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("duration %q is negative", s)
		}
		return d, nil
	}
	d, err := parseWords(text)
	if err != nil {
		return 0, fmt.Errorf("cannot read duration %q: %w (try \"90\", \"90s\", \"15 minutes\" or \"1 day\")", s, err)
	}
	return d, nil
}

// parseWords reads "<number> <unit>" pairs, where the number may be glued to the unit ("2h"),
// "a"/"an" means one, and "and" or commas may separate pairs.
func parseWords(text string) (time.Duration, error) {
	tokens := tokenize(text)
	if len(tokens) == 0 {
		return 0, fmt.Errorf("no number and unit")
	}
	var total float64
	for i := 0; i < len(tokens); {
		tok := tokens[i]
		if tok == "and" {
			i++
			continue
		}
		var n float64
		switch tok {
		case "a", "an":
			n = 1
		default:
			// Only decimal digits: ParseFloat would also take "nan", "inf" and hex floats.
			v, err := strconv.ParseFloat(tok, 64)
			if err != nil || v < 0 || strings.Trim(tok, "0123456789.") != "" {
				return 0, fmt.Errorf("%q is not a number", tok)
			}
			n = v
		}
		if i+1 >= len(tokens) {
			return 0, fmt.Errorf("%q has no unit", tok)
		}
		unit, ok := units[tokens[i+1]]
		if !ok {
			return 0, fmt.Errorf("unknown unit %q", tokens[i+1])
		}
		total += n * float64(unit)
		i += 2
	}
	if total > float64(maxDuration) {
		return 0, fmt.Errorf("too long")
	}
	return time.Duration(total), nil
}

// tokenize splits "1h30m, and 2 days" into ["1","h","30","m","and","2","days"].
func tokenize(text string) []string {
	var tokens []string
	var cur strings.Builder
	kind := 0 // 1 = number, 2 = word
	flush := func() {
		if cur.Len() > 0 {
			tokens = append(tokens, cur.String())
			cur.Reset()
		}
		kind = 0
	}
	for _, r := range text {
		switch {
		case unicode.IsDigit(r) || r == '.':
			if kind == 2 {
				flush()
			}
			kind = 1
			cur.WriteRune(r)
		case unicode.IsLetter(r):
			if kind == 1 {
				flush()
			}
			kind = 2
			cur.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return tokens
}

// Words renders a duration in Flapjack's long form: "1 day, 2 hours, 3 minutes, 4 seconds",
// omitting zero parts, "0 seconds" for zero. Sub-second parts are dropped.
func Words(d time.Duration) string {
	secs := int64(d / time.Second)
	if secs <= 0 {
		return "0 seconds"
	}
	parts := []struct {
		name string
		size int64
	}{{"day", 86400}, {"hour", 3600}, {"minute", 60}, {"second", 1}}
	var out []string
	for _, p := range parts {
		n := secs / p.size
		secs %= p.size
		if n == 0 {
			continue
		}
		name := p.name
		if n != 1 {
			name += "s"
		}
		out = append(out, fmt.Sprintf("%d %s", n, name))
	}
	return strings.Join(out, ", ")
}
