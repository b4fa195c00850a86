package jabber

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/internal/humantime"
)

// Command is one parsed bot command (reference §4.1). ParseCommand returns one of the types
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
func (Unknown) command()           {}
func (Invalid) command()           {}

// DefaultTestCheck is the check of `test notifications for <entity>` when none is given.
const DefaultTestCheck = "test"

var (
	reAckID          = regexp.MustCompile(`(?is)^ackid\s+(\S+)(?:\s+(.*))?$`)
	reAckIDBare      = regexp.MustCompile(`(?i)^ackid$`)
	reAckDuration    = regexp.MustCompile(`(?is)^(.*)duration:(.*)$`)
	reHelp           = regexp.MustCompile(`(?i)^help$`)
	reIdentify       = regexp.MustCompile(`(?i)^identify$`)
	reTest           = regexp.MustCompile(`(?is)^test\s+notifications\s+for\s+([^\s:]+)(?::(.*))?$`)
	reTell           = regexp.MustCompile(`(?is)^tell\s+me\s+about\s+([^\s:]+)(?::(.*))?$`)
	reFindEntities   = regexp.MustCompile(`(?is)^(?:find\s+)?entities\s+matching\s+/(.*)/$`)
	reFindChecks     = regexp.MustCompile(`(?is)^(?:find\s+)?checks\s+(?:matching\s+/(.*?)/\s+)?on\s+(?:entities\s+matching\s+/(.*)/|([^\s/]+))$`)
	reStatusEntities = regexp.MustCompile(`(?is)^status\s+entities\s+/(.*)/$`)
	reStatusChecks   = regexp.MustCompile(`(?is)^status\s+checks\s+/(.*?)/(?:\s+on\s+/(.*)/)?$`)
)

// ParseCommand reads a command text (already extracted from the message and HTML-stripped).
// Keywords are case-insensitive; entity names are lower-cased (SPEC 4.14); check names keep
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
	}
	return Unknown{Text: text}
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
