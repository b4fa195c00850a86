package roster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/internal/strset"
	"github.com/flapjackgo/flapjack/timerestriction"
)

// What a valid contact, medium and notification rule is. The write functions of this package
// check every value with these before writing; the importer calls the same checks value by
// value while it reads a file, so a file and the JSON API refuse the same values for the same
// reasons. Each *Problem function returns "" for a valid value, else the reason.

// ErrInvalid is wrapped by a *ValidationError.
var ErrInvalid = errors.New("invalid")

// FieldError is one refused value: Field is its path in Flapjack's JSON ("media.sms.address",
// "notification_rules[1].regex_tags[0]"), Reason why.
type FieldError struct {
	Field  string
	Reason string
	// Err is the condition behind the reason when it is not the value itself but what Redis
	// holds: ErrNotFound (a rule's contact does not exist) or ErrRuleTaken.
	Err error
}

func (e FieldError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

// ValidationError lists every refused value of a write; nothing was written.
type ValidationError struct{ Errors []FieldError }

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Errors))
	for i, f := range e.Errors {
		parts[i] = f.Error()
	}
	return strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// PagerdutyMedium is the medium whose address is a PagerDuty service key; the contact's
// PagerDuty REST credentials go to contact_pagerduty:ID.
const PagerdutyMedium = "pagerduty"

// MinInterval and MinRollupThreshold are the smallest values a medium's interval (seconds
// between repeats) and rollup threshold (failing checks before rollup; 0 = never) may take.
const (
	MinInterval        = 1
	MinRollupThreshold = 0
)

// IDProblem checks a contact's id (and an import record's): not empty, no surrounding spaces.
func IDProblem(id string) string {
	switch {
	case strings.TrimSpace(id) == "":
		return "must not be empty"
	case strings.TrimSpace(id) != id:
		return "must not start or end with spaces"
	}
	return ""
}

// RuleIDProblem checks a notification rule's id: not empty.
func RuleIDProblem(id string) string {
	if strings.TrimSpace(id) == "" {
		return "must not be empty"
	}
	return ""
}

// TimezoneProblem checks a contact's time zone: "" (the notifier's default) or an IANA name.
func TimezoneProblem(name string) string {
	_, err := location(name)
	if err != nil {
		return err.Error()
	}
	return ""
}

// location is the zone of a contact's timezone ("" = UTC, for checking syntax only).
func location(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	return loc, nil
}

// TagProblem checks a tag (of a contact or a rule) or an entity name in a rule: not blank.
func TagProblem(tag string) string {
	if strings.TrimSpace(tag) == "" {
		return "must not be empty"
	}
	return ""
}

// mediumName is what a medium may be called: it is part of key names and of the notifier's
// <medium>_queue setting.
var mediumName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// MediumNameProblem checks a medium's name (of an address or in a rule's media lists).
func MediumNameProblem(name string) string {
	if !mediumName.MatchString(name) {
		return fmt.Sprintf("medium %q: names are lower-case letters, digits and _", name)
	}
	return ""
}

// AddressProblem checks a medium's address (a PagerDuty service key for pagerduty).
func AddressProblem(address string) string {
	if strings.TrimSpace(address) == "" {
		return "must not be empty"
	}
	return ""
}

// IntervalProblem checks a medium's interval.
func IntervalProblem(seconds int64) string {
	if seconds < MinInterval {
		return fmt.Sprintf("must be an integer of at least %d", MinInterval)
	}
	return ""
}

// RollupThresholdProblem checks a medium's rollup threshold.
func RollupThresholdProblem(medium string, n int64) string {
	switch {
	case medium == PagerdutyMedium:
		return "pagerduty alerts are never rolled up"
	case n < MinRollupThreshold:
		return fmt.Sprintf("must be an integer of at least %d", MinRollupThreshold)
	}
	return ""
}

// PatternProblem checks a rule's regex_entities or regex_tags pattern (Go RE2, docs/decisions.md D7).
func PatternProblem(pattern string) string {
	if _, err := regexp.Compile(pattern); err != nil {
		return fmt.Sprintf("pattern %q does not compile as a Go RE2 regular expression: %v", pattern, err)
	}
	return ""
}

// RuleContactProblem checks the contact_id a rule given with its contact carries ("" = none).
func RuleContactProblem(ruleContactID, contactID string) string {
	if ruleContactID != "" && ruleContactID != contactID {
		return fmt.Sprintf("is %q, not the id of this contact", ruleContactID)
	}
	return ""
}

// TimeRestrictions checks the shape of a rule's time restrictions (a JSON array of objects,
// each with a start and an end: start_time or start_date, end_time or end_date; "" and "null"
// mean none) and returns them as compact JSON, "[]" when there are none. Problems name the
// field under time_restrictions: "" for the whole, "[1]", "[2].end_time". The restrictions
// themselves (ice_cube hashes or RRULE strings, docs/decisions.md D9) are read by the notifier, which
// treats one it cannot read as never active: see RuleWarnings.
func TimeRestrictions(raw string) (string, []FieldError) {
	t := strings.TrimSpace(raw)
	if t == "" || t == "null" {
		return "[]", nil
	}
	var items []json.RawMessage
	if t[0] != '[' || json.Unmarshal([]byte(t), &items) != nil {
		return "", []FieldError{{Reason: "must be an array of objects"}}
	}
	var problems []FieldError
	for i, item := range items {
		at := "[" + strconv.Itoa(i) + "]"
		var obj map[string]json.RawMessage
		if b := bytes.TrimSpace(item); len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &obj) != nil {
			problems = append(problems, FieldError{Field: at, Reason: "must be an object"})
			continue
		}
		if isNull(obj["start_time"]) && isNull(obj["start_date"]) {
			problems = append(problems, FieldError{Field: at + ".start_time", Reason: "is required"})
		}
		if isNull(obj["end_time"]) && isNull(obj["end_date"]) {
			problems = append(problems, FieldError{Field: at + ".end_time", Reason: "is required"})
		}
	}
	if len(problems) > 0 {
		return "", problems
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(t)); err != nil {
		return "", []FieldError{{Reason: err.Error()}}
	}
	return b.String(), nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// NormalizeEntityName is how an entity name in a rule is stored: trimmed and lower-cased
// (docs/decisions.md D14).
func NormalizeEntityName(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Checker gathers FieldErrors under a path prefix; the writes of contacts and of the entities
// and checks they link to validate with it.
type Checker struct {
	Prefix string // the path the fields checked are under
	errs   []FieldError
}

func (c *Checker) at(field string) string {
	switch {
	case c.Prefix == "":
		return field
	case field == "" || field[0] == '[':
		return c.Prefix + field
	}
	return c.Prefix + "." + field
}

// Check records reason (a problem, "" for none) against field and reports whether there was none.
func (c *Checker) Check(field, reason string) bool {
	if reason == "" {
		return true
	}
	c.errs = append(c.errs, FieldError{Field: c.at(field), Reason: reason})
	return false
}

// Err is the *ValidationError of the problems recorded, nil when there were none.
func (c *Checker) Err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return &ValidationError{Errors: c.errs}
}

// Index names element i of field, as FieldErrors do.
func Index(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// ValidateContact checks everything a contact is made of; the error is a *ValidationError.
func ValidateContact(c ContactData) error {
	var k Checker
	k.contact(&c)
	return k.Err()
}

func (k *Checker) contact(c *ContactData) {
	k.Check("id", IDProblem(c.ID))
	k.Check("timezone", TimezoneProblem(c.Timezone))
	for i, t := range c.Tags {
		k.Check(Index("tags", i), TagProblem(t))
	}
	seen := map[string]bool{}
	for _, m := range c.Media {
		field := "media." + m.Name
		if seen[m.Name] {
			k.Check(field, "given twice")
			continue
		}
		seen[m.Name] = true
		k.medium(field, m)
	}
	rules := map[string]int{}
	for i, r := range c.Rules {
		field := Index("notification_rules", i)
		if prev, dup := rules[r.ID]; dup && r.ID != "" {
			k.Check(field+".id", fmt.Sprintf("rule id %q is also used by %s", r.ID, Index("notification_rules", prev)))
		} else {
			rules[r.ID] = i
		}
		k.Check(field+".contact_id", RuleContactProblem(r.ContactID, c.ID))
		sub := Checker{Prefix: k.at(field)}
		sub.rule(&r)
		k.errs = append(k.errs, sub.errs...)
	}
}

// ValidateMedium checks one medium of a contact; the error is a *ValidationError whose fields
// are under media.<name>.
func ValidateMedium(m Medium) error {
	var k Checker
	k.medium("media."+m.Name, m)
	return k.Err()
}

func (k *Checker) medium(field string, m Medium) {
	if !k.Check(field, MediumNameProblem(m.Name)) {
		return
	}
	sub := Checker{Prefix: k.at(field)}
	if m.RollupThreshold != nil {
		sub.Check("rollup_threshold", RollupThresholdProblem(m.Name, *m.RollupThreshold))
	}
	sub.Check("address", AddressProblem(m.Address))
	if m.Interval != nil {
		sub.Check("interval", IntervalProblem(*m.Interval))
	}
	k.errs = append(k.errs, sub.errs...)
}

// ValidateRule checks a notification rule; the error is a *ValidationError. Its contact is
// checked by the writers: it must exist.
func ValidateRule(r Rule) error {
	var k Checker
	k.rule(&r)
	return k.Err()
}

func (k *Checker) rule(r *Rule) {
	k.Check("id", RuleIDProblem(r.ID))
	lists := []struct {
		field string
		items []string
		check func(string) string
	}{
		{"entities", r.Entities, TagProblem},
		{"regex_entities", r.RegexEntities, PatternProblem},
		{"tags", r.Tags, TagProblem},
		{"regex_tags", r.RegexTags, PatternProblem},
	}
	for _, l := range lists {
		for i, v := range l.items {
			k.Check(Index(l.field, i), l.check(v))
		}
	}
	_, problems := TimeRestrictions(r.TimeRestrictions)
	for _, p := range problems {
		k.Check("time_restrictions"+p.Field, p.Reason)
	}
	for _, l := range []struct {
		field string
		items []string
	}{{"unknown_media", r.UnknownMedia}, {"warning_media", r.WarningMedia}, {"critical_media", r.CriticalMedia}} {
		for i, m := range l.items {
			k.Check(Index(l.field, i), MediumNameProblem(m))
		}
	}
}

// ContactWarnings lists what is worth telling about a valid contact without making it invalid:
// a rule naming a medium the contact has no address for, a time restriction the notifier will
// not be able to read (it treats it as never active, docs/decisions.md D9).
func ContactWarnings(c ContactData) []string {
	loc, err := location(c.Timezone)
	if err != nil {
		loc = time.UTC
	}
	var out []string
	for _, r := range c.Rules {
		out = append(out, restrictionWarnings(c.ID, r, loc)...)
	}
	addresses := map[string]bool{}
	for _, m := range c.Media {
		addresses[m.Name] = true
	}
	for _, r := range c.Rules {
		for _, l := range []struct {
			field string
			items []string
		}{{"unknown_media", r.UnknownMedia}, {"warning_media", r.WarningMedia}, {"critical_media", r.CriticalMedia}} {
			for _, m := range strset.Unique(l.items) {
				if !addresses[m] {
					out = append(out, fmt.Sprintf("contact %q: rule %q lists %q in %s, but the contact has no %s address", c.ID, r.ID, m, l.field, m))
				}
			}
		}
	}
	return out
}

// RuleWarnings is ContactWarnings' time restriction part for a rule written on its own (read in
// UTC: the syntax does not depend on the zone).
func RuleWarnings(r Rule) []string { return restrictionWarnings(r.ContactID, r, time.UTC) }

func restrictionWarnings(contactID string, r Rule, loc *time.Location) []string {
	compact, problems := TimeRestrictions(r.TimeRestrictions)
	if len(problems) > 0 {
		return nil
	}
	var out []string
	_, errs := timerestriction.ParseList(compact, loc)
	for _, err := range errs {
		out = append(out, fmt.Sprintf("contact %q: rule %q: the notifier will treat a time restriction as never active: %v", contactID, r.ID, err))
	}
	return out
}
