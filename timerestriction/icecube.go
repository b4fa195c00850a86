package timerestriction

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	rrule "github.com/teambition/rrule-go"
)

// iceCubeRule is one entry of "rrules", as ice_cube 0.12's Rule#to_hash writes it.
type iceCubeRule struct {
	RuleType    json.RawMessage `json:"rule_type"`
	Interval    json.RawMessage `json:"interval"`
	WeekStart   json.RawMessage `json:"week_start"`
	Until       json.RawMessage `json:"until"`
	Count       json.RawMessage `json:"count"`
	Validations json.RawMessage `json:"validations"`
}

var frequencies = map[string]rrule.Frequency{
	"yearly": rrule.YEARLY, "monthly": rrule.MONTHLY, "weekly": rrule.WEEKLY, "daily": rrule.DAILY,
	"hourly": rrule.HOURLY, "minutely": rrule.MINUTELY, "secondly": rrule.SECONDLY,
}

var weekdayNames = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

var monthNames = map[string]int{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10,
	"nov": 11, "dec": 12,
}

// parseIceCubeRule reads one ice_cube rule hash into a rule spec.
func parseIceCubeRule(raw json.RawMessage, loc *time.Location) (ruleSpec, error) {
	var spec ruleSpec
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return spec, fmt.Errorf("not a JSON object: %s", abbreviate(raw))
	}
	var in iceCubeRule
	if err := json.Unmarshal(raw, &in); err != nil {
		return spec, fmt.Errorf("not valid JSON: %w", err)
	}
	if isNull(in.RuleType) {
		return spec, errors.New("missing rule_type")
	}
	var ruleType string
	if err := json.Unmarshal(in.RuleType, &ruleType); err != nil {
		return spec, fmt.Errorf("rule_type is not a string: %s", abbreviate(in.RuleType))
	}
	// Flapjack stores "Weekly"; ice_cube itself writes "IceCube::WeeklyRule".
	name := strings.ToLower(strings.TrimSpace(ruleType))
	name = strings.TrimSuffix(strings.TrimPrefix(name, "icecube::"), "rule")
	freq, ok := frequencies[name]
	if !ok {
		return spec, fmt.Errorf("unknown rule_type %q", ruleType)
	}
	spec.opt.Freq = freq
	spec.opt.Interval = 1
	if !isNull(in.Interval) {
		n, err := intValue(in.Interval)
		if err != nil {
			return spec, fmt.Errorf("interval: %w", err)
		}
		if n < 1 {
			return spec, fmt.Errorf("interval %d must be at least 1", n)
		}
		spec.opt.Interval = n
	}
	spec.opt.Wkst = rrule.SU // ice_cube's default week start, unlike RFC 5545's Monday
	if !isNull(in.WeekStart) {
		wd, err := weekdayValue(in.WeekStart)
		if err != nil {
			return spec, fmt.Errorf("week_start: %w", err)
		}
		spec.opt.Wkst = rruleWeekdays[wd]
	}
	if !isNull(in.Until) {
		st, err := parseTimeValue(in.Until, loc, false)
		if err != nil {
			return spec, fmt.Errorf("until: %w", err)
		}
		spec.opt.Until = st.at
	}
	if !isNull(in.Count) {
		n, err := intValue(in.Count)
		if err != nil {
			return spec, fmt.Errorf("count: %w", err)
		}
		if n < 1 {
			return spec, fmt.Errorf("count %d must be at least 1", n)
		}
		spec.count = n
	}
	if err := applyValidations(&spec, in.Validations); err != nil {
		return spec, err
	}
	return spec, nil
}

// applyValidations maps ice_cube's validations onto rrule options. Values within one validation
// are alternatives; different validations must all hold, as in ice_cube (and rrule-go's BY*).
func applyValidations(spec *ruleSpec, raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var vals map[string]json.RawMessage
	if err := json.Unmarshal(raw, &vals); err != nil {
		return fmt.Errorf("validations is not an object: %s", abbreviate(raw))
	}
	var days []time.Weekday
	var hasDays bool
	var nth []nthWeekday
	var hasNth bool
	// Sorted keys make the first error reported the same every time.
	for _, key := range slices.Sorted(maps.Keys(vals)) {
		v := vals[key]
		if isNull(v) {
			continue
		}
		var err error
		switch key {
		case "day":
			days, err = weekdayList(v)
			hasDays = len(days) > 0 // an empty list adds no validation, as in ice_cube
		case "hour_of_day":
			spec.opt.Byhour, err = intList(v, 0, 23, false)
		case "minute_of_hour":
			spec.opt.Byminute, err = intList(v, 0, 59, false)
		case "second_of_minute":
			spec.opt.Bysecond, err = intList(v, 0, 59, false)
		case "day_of_month":
			spec.opt.Bymonthday, err = intList(v, 1, 31, true)
		case "day_of_year":
			spec.opt.Byyearday, err = intList(v, 1, 366, true)
		case "month_of_year":
			spec.opt.Bymonth, err = monthList(v)
		case "day_of_week":
			nth, err = nthWeekdays(v)
			hasNth = len(nth) > 0
		default:
			return fmt.Errorf("unknown validation %q", key)
		}
		if err != nil {
			return fmt.Errorf("validation %s: %w", key, err)
		}
	}
	// ice_cube counts day_of_week's nth within the month whatever the rule type, which rrule-go
	// only does for MONTHLY. So rrule-go is given the plain weekdays and the nth is a filter.
	allowed := days
	if hasNth {
		keep := nth[:0]
		var wds []time.Weekday
		for _, x := range nth {
			if hasDays && !slices.Contains(days, x.weekday) {
				continue // "day" must hold too
			}
			keep = append(keep, x)
			if !slices.Contains(wds, x.weekday) {
				wds = append(wds, x.weekday)
			}
		}
		spec.nth = keep
		allowed = wds
	}
	if (hasDays || hasNth) && len(allowed) == 0 {
		// An empty BYDAY would mean "any day" to rrule-go, the opposite of what was asked.
		spec.never = true
		return nil
	}
	slices.Sort(allowed)
	for _, wd := range allowed {
		spec.opt.Byweekday = append(spec.opt.Byweekday, rruleWeekdays[wd])
	}
	return nil
}

// intValue reads a JSON integer (or a string holding one, as some tools write).
func intValue(raw json.RawMessage) (int, error) {
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, fmt.Errorf("not a number: %s", abbreviate(raw))
	}
	switch x := v.(type) {
	case json.Number:
		n = x
	case string:
		n = json.Number(strings.TrimSpace(x))
	default:
		return 0, fmt.Errorf("not a number: %s", abbreviate(raw))
	}
	i, err := strconv.Atoi(string(n))
	if err != nil {
		return 0, fmt.Errorf("not a whole number: %s", abbreviate(raw))
	}
	return i, nil
}

// list reads a JSON list, accepting a lone value as a list of one.
func list(raw json.RawMessage) ([]json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] != '[' {
		return []json.RawMessage{t}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(t, &items); err != nil {
		return nil, fmt.Errorf("not a list: %s", abbreviate(raw))
	}
	return items, nil
}

// intList reads integers in lo..hi, or also in -hi..-lo when negative counts from the end.
func intList(raw json.RawMessage, lo, hi int, negative bool) ([]int, error) {
	items, err := list(raw)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, item := range items {
		n, err := intValue(item)
		if err != nil {
			return nil, err
		}
		if (n < lo || n > hi) && (!negative || n > -lo || n < -hi) {
			if negative {
				return nil, fmt.Errorf("%d out of range %d..%d or -%d..-%d", n, lo, hi, hi, lo)
			}
			return nil, fmt.Errorf("%d out of range %d..%d", n, lo, hi)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

func monthList(raw json.RawMessage) ([]int, error) {
	items, err := list(raw)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, item := range items {
		var name string
		n, ok := 0, false
		if json.Unmarshal(item, &name) == nil {
			n, ok = monthNames[strings.ToLower(strings.TrimSpace(name))]
		}
		if !ok {
			if n, err = intValue(item); err != nil {
				return nil, fmt.Errorf("month %s: want 1..12 or a month name", abbreviate(item))
			}
		}
		if n < 1 || n > 12 {
			return nil, fmt.Errorf("month %d out of range 1..12", n)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// weekdayValue reads ice_cube's weekday: 0 (Sunday) to 6, or an English name.
func weekdayValue(raw json.RawMessage) (time.Weekday, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		if wd, ok := weekdayNames[strings.ToLower(strings.TrimSpace(name))]; ok {
			return wd, nil
		}
	}
	n, err := intValue(raw)
	if err != nil {
		return 0, fmt.Errorf("weekday %s: want 0 (Sunday) to 6 or a weekday name", abbreviate(raw))
	}
	if n < 0 || n > 6 {
		return 0, fmt.Errorf("weekday %d out of range 0 (Sunday) to 6", n)
	}
	return time.Weekday(n), nil
}

func weekdayList(raw json.RawMessage) ([]time.Weekday, error) {
	items, err := list(raw)
	if err != nil {
		return nil, err
	}
	var out []time.Weekday
	for _, item := range items {
		wd, err := weekdayValue(item)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, wd) {
			out = append(out, wd)
		}
	}
	return out, nil
}

// nthWeekdays reads day_of_week: {"1": [1, -1]} is the first and last Monday of the month.
func nthWeekdays(raw json.RawMessage) ([]nthWeekday, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("want an object of weekday to occurrence numbers: %s", abbreviate(raw))
	}
	var out []nthWeekday
	for _, k := range slices.Sorted(maps.Keys(m)) {
		wd, err := weekdayValue(json.RawMessage(strconv.Quote(k)))
		if err != nil {
			return nil, err
		}
		ns, err := intList(m[k], 1, 5, true)
		if err != nil {
			return nil, fmt.Errorf("weekday %s: %w", k, err)
		}
		if len(ns) == 0 {
			return nil, fmt.Errorf("weekday %s: no occurrence numbers", k)
		}
		for _, n := range ns {
			out = append(out, nthWeekday{weekday: wd, n: n})
		}
	}
	return out, nil
}
