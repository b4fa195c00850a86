package timerestriction

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	rrule "github.com/teambition/rrule-go"
)

// rfcSet is the content of an "rrule" string.
type rfcSet struct {
	rules, exrules  []ruleSpec
	rdates, exdates []stamp
	exdays          []int64
}

// parseRFC5545 reads RRULE, EXRULE, RDATE and EXDATE lines. Each line is parsed on its own
// because rrule-go's set parser drops EXRULE lines and keeps only the last RRULE.
func parseRFC5545(text string, start stamp, loc *time.Location) (rfcSet, error) {
	var set rfcSet
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line) // also drops the \r of CRLF line ends
		if line == "" {
			continue
		}
		if err := set.addLine(line, start, loc); err != nil {
			return set, fmt.Errorf("line %d %q: %w", i+1, abbreviate([]byte(line)), err)
		}
	}
	return set, nil
}

func (set *rfcSet) addLine(line string, start stamp, loc *time.Location) error {
	if strings.HasPrefix(strings.ToUpper(line), "FREQ=") {
		spec, err := parseRRuleBody(line, loc)
		if err != nil {
			return err
		}
		set.rules = append(set.rules, spec)
		return nil
	}
	head, value, ok := strings.Cut(line, ":")
	if !ok {
		return errors.New("want NAME:VALUE (RRULE, EXRULE, RDATE or EXDATE) or a bare FREQ=... rule")
	}
	name, params, _ := strings.Cut(head, ";")
	switch name = strings.ToUpper(strings.TrimSpace(name)); name {
	case "RRULE", "EXRULE":
		if params != "" {
			return fmt.Errorf("%s takes no parameters", name)
		}
		spec, err := parseRRuleBody(value, loc)
		if err != nil {
			return err
		}
		if name == "RRULE" {
			set.rules = append(set.rules, spec)
		} else {
			set.exrules = append(set.exrules, spec)
		}
	case "RDATE", "EXDATE":
		times, days, err := parseDates(params, value, loc)
		if err != nil {
			return err
		}
		if name == "EXDATE" {
			set.exdates = append(set.exdates, times...)
			set.exdays = append(set.exdays, days...)
			return nil
		}
		set.rdates = append(set.rdates, times...)
		for _, d := range days {
			// A date-only RDATE gets the start's time of day, like every other occurrence.
			w := d*86400 + (start.wall - floorDiv(start.wall, 86400)*86400)
			at, _ := rfcAt(w, loc)
			set.rdates = append(set.rdates, stamp{at: at, wall: w})
		}
	case "DTSTART":
		return errors.New("DTSTART is not allowed: start_time is the DTSTART")
	default:
		return fmt.Errorf("unknown property %q", name)
	}
	return nil
}

// parseRRuleBody reads the value of an RRULE or EXRULE line. rrule-go does the parsing; the
// checks before it catch what it would silently accept (INTERVAL=0 reads as "no interval").
func parseRRuleBody(body string, loc *time.Location) (ruleSpec, error) {
	var spec ruleSpec
	var attrs []string
	for _, attr := range strings.Split(strings.ToUpper(body), ";") {
		if attr = strings.TrimSpace(attr); attr != "" { // tolerates a trailing ";"
			attrs = append(attrs, attr)
		}
	}
	body = strings.Join(attrs, ";")
	seen := map[string]bool{}
	var untilDate bool
	var untilWall int64 // a zone-less date-time UNTIL, as written
	untilLocal := false
	for _, attr := range attrs {
		key, value, ok := strings.Cut(attr, "=")
		if !ok || key == "" {
			return spec, fmt.Errorf("%q is not NAME=VALUE", attr)
		}
		if seen[key] {
			return spec, fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		switch key {
		case "DTSTART":
			return spec, errors.New("DTSTART is not allowed: start_time is the DTSTART")
		case "BYEASTER":
			return spec, errors.New("BYEASTER is not supported")
		case "INTERVAL", "COUNT":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return spec, fmt.Errorf("%s=%s must be a whole number of at least 1", key, value)
			}
		case "UNTIL":
			untilDate = len(value) == len("20060102")
			if f, err := time.Parse("20060102T150405", value); err == nil {
				untilWall, untilLocal = f.Unix(), true
			}
		}
	}
	opt, err := rrule.StrToROptionInLocation(body, loc)
	if err != nil {
		return spec, fmt.Errorf("cannot read rule: %w", err)
	}
	if opt.Interval == 0 {
		opt.Interval = 1
	}
	if untilDate {
		// A date-only UNTIL includes that whole day.
		y, m, d := opt.Until.Date()
		opt.Until = time.Date(y, m, d, 23, 59, 59, 0, loc)
	}
	if untilLocal {
		// A local UNTIL is a DATE-TIME like any other (rrule-go reads it with time.Date).
		opt.Until, _ = rfcAt(untilWall, loc)
	}
	if !opt.Until.IsZero() {
		if err := checkYear(opt.Until); err != nil {
			return spec, fmt.Errorf("UNTIL: %w", err)
		}
	}
	spec.count = opt.Count
	opt.Count = 0
	spec.opt = *opt
	return spec, nil
}

// parseDates reads the value of an RDATE or EXDATE line with its parameters (TZID, VALUE). It
// returns date-times and, separately, dates (days since 1970-01-01, local).
func parseDates(params, value string, loc *time.Location) ([]stamp, []int64, error) {
	zone := loc
	dateOnly := false
	if params != "" {
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(p, "=")
			switch strings.ToUpper(strings.TrimSpace(k)) {
			case "TZID":
				z, ok := loadZone(strings.TrimSpace(v))
				if !ok {
					return nil, nil, fmt.Errorf("unknown TZID %q", v)
				}
				zone = z
			case "VALUE":
				switch strings.ToUpper(strings.TrimSpace(v)) {
				case "DATE-TIME":
				case "DATE":
					dateOnly = true
				default:
					return nil, nil, fmt.Errorf("VALUE=%s is not supported", v)
				}
			default:
				return nil, nil, fmt.Errorf("unknown parameter %q", p)
			}
		}
	}
	var times []stamp
	var days []int64
	for _, v := range strings.Split(value, ",") {
		v = strings.TrimSpace(v)
		if len(v) == len("20060102") {
			d, err := time.Parse("20060102", v)
			if err != nil {
				return nil, nil, fmt.Errorf("cannot read date %q", v)
			}
			if err := checkYear(d); err != nil {
				return nil, nil, fmt.Errorf("date %q: %w", v, err)
			}
			days = append(days, floorDiv(d.Unix(), 86400))
			continue
		}
		if dateOnly {
			return nil, nil, fmt.Errorf("VALUE=DATE wants YYYYMMDD, got %q", v)
		}
		if !(len(v) == len("20060102T150405") || len(v) == len("20060102T150405Z") && v[15] == 'Z') || v[8] != 'T' {
			return nil, nil, fmt.Errorf("cannot read time %q: want YYYYMMDDTHHMMSS, optionally with Z", v)
		}
		st, err := parseTimeString(v, zone, loc, true)
		if err != nil {
			return nil, nil, err
		}
		times = append(times, st)
	}
	return times, days, nil
}
