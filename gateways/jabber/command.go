package jabber

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/internal/humantime"
)

// Command is one parsed bot command (docs/flapjack-1x.md 4.1). ParseCommand returns one of the types
// below; Unknown and Invalid carry what to answer.
type Command interface{ command() }

// AckID acknowledges the check of an alert: `ACKID <hash> <comment> [duration: <spec>]`.
type AckID struct {
	Hash    string // lower-cased
	Comment string // "" = missing (refused when executed)
	// Duration is the requested length; 0 when none was given or it was unusable (see
	// DurationProblem), in which case the configured ack_duration applies.
	Duration        time.Duration
	DurationText    string // as typed after "duration:"
	DurationProblem string // why DurationText was not used
}

// Help lists the commands.
type Help struct{}

// Identify tells the bot's version, process, host, identifiers and boot time.
type Identify struct{}

// TestNotifications sends a test notification for an entity's check (default "test").
type TestNotifications struct{ Entity, Check string }

// TellMeAbout reports the maintenance of an entity's checks (Check "" = every current check).
type TellMeAbout struct{ Entity, Check string }

// FindEntities lists entity names matching Pattern.
type FindEntities struct{ Pattern string }

// FindChecks lists the current checks matching CheckPattern ("" = all) of one Entity, or of
// every entity matching EntityPattern.
type FindChecks struct {
	CheckPattern  string
	Entity        string
	EntityPattern string
}

// StatusEntities reports the state of every current check of the entities matching Pattern.
type StatusEntities struct{ Pattern string }

// StatusChecks reports the state of the current checks matching CheckPattern on the entities
// matching EntityPattern (".*" when not given).
type StatusChecks struct{ CheckPattern, EntityPattern string }

// AckEntities acknowledges every failing current check of the entities matching Pattern:
// `ack entities /<regex>/ [comment] [duration: <time>]`.
type AckEntities struct {
	Pattern  string
	Comment  string        // "" = "Set via chatbot"
	Duration time.Duration // DefaultBulkDuration when none was given
}

// AckChecks acknowledges the failing current checks matching CheckPattern on the entities
// matching EntityPattern: `ack checks /<regex>/ on /<regex>/ [comment] [duration: <time>]`.
type AckChecks struct {
	CheckPattern  string
	EntityPattern string
	Comment       string        // "" = "Set via chatbot"
	Duration      time.Duration // DefaultBulkDuration when none was given
}

// MaintEntities creates scheduled maintenance on every current check of the entities matching
// Pattern: `maint entities /<regex>/ [comment] [start-in: <time>] [start-at: <time>]
// [duration: <time>]`. It starts StartIn after the command runs, or at StartAt (as typed; read
// against the clock when the command runs, see startTime), or now.
type MaintEntities struct {
	Pattern  string
	Comment  string        // "" = "Set via chatbot"
	Duration time.Duration // DefaultBulkDuration when none was given
	StartIn  time.Duration
	StartAt  string
}

// OnCall says who is on call now in one schedule, or in every schedule (Schedule ""):
// `oncall [SCHEDULE]`.
type OnCall struct{ Schedule string }

// Unknown is anything else; the bot asks what was meant.
type Unknown struct{ Text string }

// Invalid is a recognised command that cannot run (a bad regex, a missing argument); Reply
// says why.
type Invalid struct{ Reply string }

func (AckID) command()             {}
func (Help) command()              {}
func (Identify) command()          {}
func (TestNotifications) command() {}
func (TellMeAbout) command()       {}
func (FindEntities) command()      {}
func (FindChecks) command()        {}
func (StatusEntities) command()    {}
func (StatusChecks) command()      {}
func (AckEntities) command()       {}
func (AckChecks) command()         {}
func (MaintEntities) command()     {}
func (OnCall) command()            {}
func (Unknown) command()           {}
func (Invalid) command()           {}

// DefaultTestCheck is the check of `test notifications for <entity>` when none is given.
const DefaultTestCheck = "test"

// DefaultBulkDuration is the length of `ack entities`, `ack checks` and `maint entities` when
// no duration is given (Flapjack 1.x: one hour; ACKID's default is ack_duration).
const DefaultBulkDuration = time.Hour

// defaultComment is the comment of bulk acknowledgements and maintenance when none is given.
const defaultComment = "Set via chatbot"

// Usage replies of the bulk commands, when a part is missing.
const (
	usageAckEntities = "usage: ack entities /<regex>/ [comment] [duration: <time>], e.g. ack entities /^web-/ deploying duration: 30 minutes"
	usageAckChecks   = "usage: ack checks /<check regex>/ on /<entity regex>/ [comment] [duration: <time>], e.g. ack checks /^HTTP/ on /^web-/ upstream is down"
	usageMaint       = "usage: maint entities /<regex>/ [comment] [start-in: <time>] [start-at: <time>] [duration: <time>], " +
		"e.g. maint entities /^db-/ kernel upgrade start-at: 22:00 duration: 30 minutes"
)

var (
	reAckID          = regexp.MustCompile(`(?is)^ackid\s+(\S+)(?:\s+(.*))?$`)
	reAckIDBare      = regexp.MustCompile(`(?i)^ackid$`)
	reAckDuration    = regexp.MustCompile(`(?is)^(.*)duration:(.*)$`)
	reHelp           = regexp.MustCompile(`(?i)^help$`)
	reIdentify       = regexp.MustCompile(`(?i)^identify$`)
	reOnCall         = regexp.MustCompile(`(?i)^on-?call(?:\s+(\S+))?$`)
	reTest           = regexp.MustCompile(`(?is)^test\s+notifications\s+for\s+([^\s:]+)(?::(.*))?$`)
	reTell           = regexp.MustCompile(`(?is)^tell\s+me\s+about\s+([^\s:]+)(?::(.*))?$`)
	reFindEntities   = regexp.MustCompile(`(?is)^(?:find\s+)?entities\s+matching\s+/(.*)/$`)
	reFindChecks     = regexp.MustCompile(`(?is)^(?:find\s+)?checks\s+(?:matching\s+/(.*?)/\s+)?on\s+(?:entities\s+matching\s+/(.*)/|([^\s/]+))$`)
	reStatusEntities = regexp.MustCompile(`(?is)^status\s+entities\s+/(.*)/$`)
	reStatusChecks   = regexp.MustCompile(`(?is)^status\s+checks\s+/(.*?)/(?:\s+on\s+/(.*)/)?$`)
	// A bulk command's pattern ends at the first '/' followed by a space or the end, so a
	// pattern may contain '/' and the comment after it too.
	reAckEntities     = regexp.MustCompile(`(?is)^ack\s+entities\s+/(.+?)/(?:\s+(.*))?$`)
	reAckChecks       = regexp.MustCompile(`(?is)^ack\s+checks\s+/(.+?)/\s+on\s+/(.+?)/(?:\s+(.*))?$`)
	reMaintEntities   = regexp.MustCompile(`(?is)^maint\s+entities\s+/(.+?)/(?:\s+(.*))?$`)
	reAckEntitiesWord = regexp.MustCompile(`(?i)^ack\s+entities\b`)
	reAckChecksWord   = regexp.MustCompile(`(?i)^ack\s+checks\b`)
	reAckWord         = regexp.MustCompile(`(?i)^ack(?:\s|$)`)
	reMaintWord       = regexp.MustCompile(`(?i)^maint(?:\s|$)`)
	reOption          = regexp.MustCompile(`(?i)\b(start-in|start-at|duration):`)
)

// ParseCommand reads a command text (already extracted from the message and HTML-stripped).
// Keywords are case-insensitive; entity names are lower-cased (docs/decisions.md D14); check names keep
// their case; regexes are Go RE2 and are checked here.
func ParseCommand(text string) Command {
	text = strings.TrimSpace(text)
	switch {
	case reAckIDBare.MatchString(text):
		return Invalid{Reply: "usage: ACKID <hash> <comment> [duration: <time>], e.g. ACKID 8f4a2b1c looking into it duration: 2 hours"}
	case reAckID.MatchString(text):
		m := reAckID.FindStringSubmatch(text)
		return parseAckID(strings.ToLower(m[1]), m[2])
	case reHelp.MatchString(text):
		return Help{}
	case reIdentify.MatchString(text):
		return Identify{}
	case reOnCall.MatchString(text):
		return OnCall{Schedule: reOnCall.FindStringSubmatch(text)[1]}
	case reTest.MatchString(text):
		m := reTest.FindStringSubmatch(text)
		check := strings.TrimSpace(m[2])
		if check == "" {
			check = DefaultTestCheck
		}
		return TestNotifications{Entity: strings.ToLower(m[1]), Check: check}
	case reTell.MatchString(text):
		m := reTell.FindStringSubmatch(text)
		return TellMeAbout{Entity: strings.ToLower(m[1]), Check: strings.TrimSpace(m[2])}
	case reFindEntities.MatchString(text):
		m := reFindEntities.FindStringSubmatch(text)
		if bad := checkPatterns(m[1]); bad != nil {
			return *bad
		}
		return FindEntities{Pattern: m[1]}
	case reFindChecks.MatchString(text):
		m := reFindChecks.FindStringSubmatch(text)
		if bad := checkPatterns(m[1], m[2]); bad != nil {
			return *bad
		}
		return FindChecks{CheckPattern: m[1], EntityPattern: m[2], Entity: strings.ToLower(m[3])}
	case reStatusEntities.MatchString(text):
		m := reStatusEntities.FindStringSubmatch(text)
		if bad := checkPatterns(m[1]); bad != nil {
			return *bad
		}
		return StatusEntities{Pattern: m[1]}
	case reStatusChecks.MatchString(text):
		m := reStatusChecks.FindStringSubmatch(text)
		entities := m[2]
		if entities == "" {
			entities = ".*"
		}
		if bad := checkPatterns(m[1], entities); bad != nil {
			return *bad
		}
		return StatusChecks{CheckPattern: m[1], EntityPattern: entities}
	case reAckEntities.MatchString(text):
		m := reAckEntities.FindStringSubmatch(text)
		return parseAckEntities(m[1], m[2])
	case reAckChecks.MatchString(text):
		m := reAckChecks.FindStringSubmatch(text)
		return parseAckChecks(m[1], m[2], m[3])
	case reMaintEntities.MatchString(text):
		m := reMaintEntities.FindStringSubmatch(text)
		return parseMaintEntities(m[1], m[2])
	case reAckEntitiesWord.MatchString(text):
		return Invalid{Reply: usageAckEntities}
	case reAckChecksWord.MatchString(text):
		return Invalid{Reply: usageAckChecks}
	case reAckWord.MatchString(text):
		return Invalid{Reply: usageAckEntities + "\n" + usageAckChecks + "\n(to acknowledge one alert: ACKID <hash> <comment>)"}
	case reMaintWord.MatchString(text):
		return Invalid{Reply: usageMaint}
	}
	return Unknown{Text: text}
}

func parseAckEntities(pattern, rest string) Command {
	if bad := checkPatterns(pattern); bad != nil {
		return *bad
	}
	comment, opts, problem := splitOptions(rest, "duration")
	duration, problem := bulkDuration(opts, problem)
	if problem != "" {
		return Invalid{Reply: "ERROR - " + problem + " - nothing was acknowledged"}
	}
	return AckEntities{Pattern: pattern, Comment: comment, Duration: duration}
}

func parseAckChecks(checkPattern, entityPattern, rest string) Command {
	if bad := checkPatterns(checkPattern, entityPattern); bad != nil {
		return *bad
	}
	comment, opts, problem := splitOptions(rest, "duration")
	duration, problem := bulkDuration(opts, problem)
	if problem != "" {
		return Invalid{Reply: "ERROR - " + problem + " - nothing was acknowledged"}
	}
	return AckChecks{CheckPattern: checkPattern, EntityPattern: entityPattern, Comment: comment, Duration: duration}
}

func parseMaintEntities(pattern, rest string) Command {
	if bad := checkPatterns(pattern); bad != nil {
		return *bad
	}
	comment, opts, problem := splitOptions(rest, "start-in", "start-at", "duration")
	duration, problem := bulkDuration(opts, problem)
	m := MaintEntities{Pattern: pattern, Comment: comment, Duration: duration}
	in, hasIn := opts["start-in"]
	at, hasAt := opts["start-at"]
	switch {
	case problem != "":
	case hasIn && hasAt:
		problem = "give start-in: or start-at:, not both"
	case hasIn:
		d, err := humantime.Parse(in)
		if err != nil {
			problem = fmt.Sprintf("couldn't understand start-in '%s' (try '30 minutes', '2h' or '1 day')", in)
		}
		m.StartIn = d.Truncate(time.Second)
	case hasAt:
		// Whether the text reads as a time does not depend on the instant it is read against.
		if _, err := startTime(at, time.Unix(0, 0).UTC()); err != nil {
			problem = err.Error()
		}
		m.StartAt = at
	}
	if problem != "" {
		return Invalid{Reply: "ERROR - " + problem + " - nothing was scheduled"}
	}
	return m
}

// splitOptions splits the text after a bulk command's pattern into the comment and the
// "name: value" options among allowed (each value runs to the next option). Other option-like
// words stay part of the text around them. problem says why the options cannot be used.
func splitOptions(rest string, allowed ...string) (comment string, opts map[string]string, problem string) {
	opts = map[string]string{}
	type found struct {
		name       string
		start, end int
	}
	var at []found
	for _, loc := range reOption.FindAllStringSubmatchIndex(rest, -1) {
		name := strings.ToLower(rest[loc[2]:loc[3]])
		for _, a := range allowed {
			if name == a {
				at = append(at, found{name, loc[0], loc[1]})
			}
		}
	}
	if len(at) == 0 {
		return strings.TrimSpace(rest), opts, ""
	}
	comment = strings.TrimSpace(rest[:at[0].start])
	for i, f := range at {
		end := len(rest)
		if i+1 < len(at) {
			end = at[i+1].start
		}
		if _, dup := opts[f.name]; dup && problem == "" {
			problem = fmt.Sprintf("'%s:' is given twice", f.name)
		}
		value := strings.TrimSpace(rest[f.end:end])
		if value == "" && problem == "" {
			problem = fmt.Sprintf("no time after '%s:'", f.name)
		}
		opts[f.name] = value
	}
	return comment, opts, problem
}

// bulkDuration reads the duration option (DefaultBulkDuration when absent), unless an earlier
// problem stands.
func bulkDuration(opts map[string]string, problem string) (time.Duration, string) {
	text, ok := opts["duration"]
	if problem != "" || !ok {
		return DefaultBulkDuration, problem
	}
	switch d, err := humantime.Parse(text); {
	case err != nil:
		return 0, fmt.Sprintf("couldn't understand duration '%s' (try '90 minutes', '2h' or '1 day')", text)
	case d < time.Second:
		return 0, fmt.Sprintf("duration '%s' is not positive", text)
	default:
		return d.Truncate(time.Second), ""
	}
}

// startTime reads a start-at time against now, in now's location: "now"; a time of day
// ("22:00", "22:00:30", "10pm", "10:30 pm") meaning its next occurrence (today, or tomorrow
// once it has passed), or preceded by "today" or "tomorrow"; a date with an optional time
// ("2026-01-06", "2026-01-06 22:00", "2026-01-06T22:00:00"); or RFC 3339.
func startTime(text string, now time.Time) (time.Time, error) {
	s := strings.Join(strings.Fields(text), " ")
	if strings.EqualFold(s, "now") {
		return now, nil
	}
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(s)); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	lower := strings.ToLower(s)
	days, explicit := 0, false
	if rest, ok := strings.CutPrefix(lower, "today "); ok {
		lower, explicit = rest, true
	} else if rest, ok := strings.CutPrefix(lower, "tomorrow "); ok {
		lower, days, explicit = rest, 1, true
	}
	lower = strings.Replace(strings.Replace(lower, " am", "am", 1), " pm", "pm", 1)
	for _, layout := range []string{"15:04:05", "15:04", "3pm", "3:04pm"} {
		c, err := time.Parse(layout, lower)
		if err != nil {
			continue
		}
		t := time.Date(now.Year(), now.Month(), now.Day()+days, c.Hour(), c.Minute(), c.Second(), 0, now.Location())
		if !explicit && t.Before(now) {
			t = time.Date(now.Year(), now.Month(), now.Day()+1, c.Hour(), c.Minute(), c.Second(), 0, now.Location())
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("couldn't understand start-at '%s' (try '22:00', '10pm', 'tomorrow 06:30', '2026-01-06 22:00' or RFC 3339)", text)
}

func parseAckID(hash, rest string) AckID {
	a := AckID{Hash: hash}
	comment := rest
	if m := reAckDuration.FindStringSubmatch(rest); m != nil {
		comment = m[1]
		a.DurationText = strings.TrimSpace(m[2])
		switch d, err := humantime.Parse(a.DurationText); {
		case a.DurationText == "":
			a.DurationProblem = "no duration after 'duration:'"
		case err != nil:
			a.DurationProblem = fmt.Sprintf("couldn't understand duration '%s'", a.DurationText)
		case d < time.Second:
			a.DurationProblem = fmt.Sprintf("duration '%s' is not positive", a.DurationText)
		default:
			a.Duration = d.Truncate(time.Second)
		}
	}
	a.Comment = strings.TrimSpace(comment)
	return a
}

// checkPatterns compiles the non-empty patterns and reports the first that fails.
func checkPatterns(patterns ...string) *Invalid {
	for _, p := range patterns {
		if p == "" {
			continue
		}
		if _, err := regexp.Compile(p); err != nil {
			return &Invalid{Reply: "that doesn't seem to be a valid pattern - " + err.Error()}
		}
	}
	return nil
}

// ---- extracting the command text from a message ----

var (
	reTag        = regexp.MustCompile(`</?[A-Za-z][^<>]*>`)
	reWhitespace = regexp.MustCompile(`\s+`)
)

// stripHTML removes markup from a message body: tags go, entities are decoded, and the text
// chunks are joined by single spaces (so rich-text clients work and newlines are tolerated).
func stripHTML(body string) string {
	if reTag.MatchString(body) {
		body = html.UnescapeString(reTag.ReplaceAllString(body, " "))
	}
	return strings.TrimSpace(reWhitespace.ReplaceAllString(body, " "))
}

// roomCommand extracts the command of a group-chat body: only a body starting with one of the
// identifiers followed by ':' or whitespace is for the bot; the command is what follows the
// identifier, an optional ':' and spaces. ok is false for bodies not addressed to the bot.
func roomCommand(body string, identifiers []string) (string, bool) {
	text := stripHTML(body)
	for _, id := range identifiers {
		if len(text) <= len(id) || !strings.EqualFold(text[:len(id)], id) {
			continue
		}
		rest := text[len(id):]
		if rest[0] != ':' && rest[0] != ' ' {
			continue
		}
		cmd := strings.TrimSpace(strings.TrimPrefix(rest, ":"))
		return cmd, cmd != ""
	}
	return "", false
}

// chatCommand extracts the command of a direct-chat body: all of it, with a leading
// "flapjack:" (or "<identifier>:") stripped.
func chatCommand(body string, identifiers []string) string {
	text := stripHTML(body)
	for _, id := range append([]string{DefaultAlias}, identifiers...) {
		if len(text) > len(id) && strings.EqualFold(text[:len(id)], id) && text[len(id)] == ':' {
			return strings.TrimSpace(text[len(id)+1:])
		}
	}
	return text
}
