package notifier

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// TimeRestrictions tells whether a rule's time restrictions (the raw JSON of the rule's
// time_restrictions field) are active at an instant, evaluated in a contact's location. Errors
// describe restrictions that could not be read; they count as inactive (docs/decisions.md D9).
type TimeRestrictions interface {
	Active(raw string, loc *time.Location, at time.Time) (bool, []error)
}

// routing is what a contact's rules say about one notification (docs/flapjack-1x.md 3.4 steps 1-7).
type routing struct {
	media      []string // media chosen for the severity, sorted
	blackholed bool
	matched    []string // ids of the rules that applied
	problems   []string // rules skipped because of a bad regex or time restriction
	notes      []string // what each rule did, in order, for explain
}

// router evaluates notification rules; it caches compiled regexes.
type router struct {
	restrictions TimeRestrictions
	mu           sync.Mutex
	regexes      map[string]*regexp.Regexp
	badRegexes   map[string]error
}

func newRouter(tr TimeRestrictions) *router {
	return &router{restrictions: tr, regexes: map[string]*regexp.Regexp{}, badRegexes: map[string]error{}}
}

// route decides the media for contact c. A contact without rules gets everything on all its
// media for every severity (docs/decisions.md D6); with rules it gets exactly what they say.
func (r *router) route(c *roster.Contact, n *schema.Notification, entity string, now time.Time, loc *time.Location) routing {
	var out routing
	for _, err := range c.RuleErrors {
		out.problems = append(out.problems, err.Error())
	}
	out.notes = append(out.notes, out.problems...)
	if len(c.Rules) == 0 && len(c.RuleErrors) == 0 {
		out.media = slices.Sorted(maps.Keys(c.Media))
		out.notes = append(out.notes, "no notification rules: every medium for every severity")
		return out
	}
	var specific, general []*roster.Rule
	for i := range c.Rules {
		rule := &c.Rules[i]
		ok, why, problem := r.matches(rule, n, entity)
		if problem != "" {
			out.problems = append(out.problems, problem)
			out.notes = append(out.notes, problem+" (rule skipped)")
			continue
		}
		if !ok {
			out.notes = append(out.notes, "rule "+rule.ID+" does not match: "+why)
			continue
		}
		active, errs := r.active(rule, loc, now)
		for _, err := range errs {
			problem := fmt.Sprintf("rule %s: time restriction: %v", rule.ID, err)
			out.problems = append(out.problems, problem)
			out.notes = append(out.notes, problem)
		}
		if !active {
			out.notes = append(out.notes, "rule "+rule.ID+" matches but is outside its time restrictions at "+
				now.In(loc).Format("Mon 2006-01-02 15:04 MST")+" ("+loc.String()+")")
			continue
		}
		if isSpecific(rule) {
			specific = append(specific, rule)
		} else {
			general = append(general, rule)
		}
	}
	applying := general
	if len(specific) > 0 {
		applying = specific
		for _, rule := range general {
			out.notes = append(out.notes, "rule "+rule.ID+" (general) matches but is ignored: a rule naming entities or tags matched")
		}
	}
	if len(applying) == 0 {
		out.notes = append(out.notes, "no rule matched and applied")
	}
	media := map[string]bool{}
	for _, rule := range applying {
		out.matched = append(out.matched, rule.ID)
		if blackholes(rule, n.Severity) {
			out.blackholed = true
			out.notes = append(out.notes, "rule "+rule.ID+" matched and blackholes "+n.Severity)
			continue
		}
		chosen := mediaFor(rule, n.Severity)
		for _, m := range chosen {
			media[m] = true
		}
		if len(chosen) == 0 {
			out.notes = append(out.notes, "rule "+rule.ID+" matched but names no media for "+n.Severity)
		} else {
			out.notes = append(out.notes, "rule "+rule.ID+" matched: "+n.Severity+" goes to "+strings.Join(chosen, ", "))
		}
	}
	if out.blackholed {
		return out
	}
	out.media = slices.Sorted(maps.Keys(media))
	return out
}

// active evaluates a rule's time restrictions; a rule without any is always active.
func (r *router) active(rule *roster.Rule, loc *time.Location, now time.Time) (bool, []error) {
	switch strings.TrimSpace(rule.TimeRestrictions) {
	case "", "null", "[]":
		return true, nil
	}
	return r.restrictions.Active(rule.TimeRestrictions, loc, now)
}

func isSpecific(r *roster.Rule) bool {
	return len(r.Entities) > 0 || len(r.RegexEntities) > 0 || len(r.Tags) > 0 || len(r.RegexTags) > 0
}

// matches checks a rule's entity and tag criteria; every non-empty criterion must hold; why
// names the first that does not. A pattern that does not compile makes the rule skip, reported
// as a problem (docs/decisions.md D7).
func (r *router) matches(rule *roster.Rule, n *schema.Notification, entity string) (ok bool, why, problem string) {
	if len(rule.Entities) > 0 && !contains(rule.Entities, entity) {
		return false, "entity " + entity + " is not in its entities", ""
	}
	for _, pattern := range rule.RegexEntities {
		re, err := r.regex(pattern)
		if err != nil {
			return false, "", fmt.Sprintf("rule %s: regex_entities %q: %v", rule.ID, pattern, err)
		}
		if !re.MatchString(entity) {
			return false, "entity " + entity + " does not match regex_entities " + strconv.Quote(pattern), ""
		}
	}
	for _, tag := range rule.Tags {
		if !contains(n.Tags, tag) {
			return false, "the check has no tag " + strconv.Quote(tag), ""
		}
	}
	for _, pattern := range rule.RegexTags {
		re, err := r.regex(pattern)
		if err != nil {
			return false, "", fmt.Sprintf("rule %s: regex_tags %q: %v", rule.ID, pattern, err)
		}
		if !anyMatch(re, n.Tags) {
			return false, "no tag of the check matches regex_tags " + strconv.Quote(pattern), ""
		}
	}
	return true, "", ""
}

const maxCachedRegexes = 4096

func (r *router) regex(pattern string) (*regexp.Regexp, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if re, ok := r.regexes[pattern]; ok {
		return re, nil
	}
	if err, ok := r.badRegexes[pattern]; ok {
		return nil, err
	}
	re, err := regexp.Compile(pattern)
	if len(r.regexes)+len(r.badRegexes) >= maxCachedRegexes {
		r.regexes, r.badRegexes = map[string]*regexp.Regexp{}, map[string]error{}
	}
	if err != nil {
		r.badRegexes[pattern] = err
		return nil, err
	}
	r.regexes[pattern] = re
	return re, nil
}

func blackholes(r *roster.Rule, severity string) bool {
	switch severity {
	case schema.SeverityUnknown:
		return r.UnknownBlackhole
	case schema.SeverityWarning:
		return r.WarningBlackhole
	case schema.SeverityCritical:
		return r.CriticalBlackhole
	}
	return false
}

func mediaFor(r *roster.Rule, severity string) []string {
	switch severity {
	case schema.SeverityUnknown:
		return r.UnknownMedia
	case schema.SeverityWarning:
		return r.WarningMedia
	case schema.SeverityCritical:
		return r.CriticalMedia
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func anyMatch(re *regexp.Regexp, list []string) bool {
	for _, v := range list {
		if re.MatchString(v) {
			return true
		}
	}
	return false
}
