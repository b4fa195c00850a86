package jabber

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

// Output limits keep replies readable and bounded on large installations.
const (
	maxEntitiesListed = 30
	maxStatusLines    = 100
)

// commandTimeout bounds the Redis work of one command.
const commandTimeout = 10 * time.Second

// oops is the reply to an internal error; details go to the log only.
const oops = "Oops, something went wrong - the details are in the flapjack log"

// bot executes parsed commands against a Store and words the replies.
type bot struct {
	cfg     Config
	store   Store
	clock   clock.Clock
	log     *zap.Logger
	version string
	host    string
	pid     int
	boot    time.Time
}

func newBot(cfg Config, store Store, clk clock.Clock, log *zap.Logger, version string) *bot {
	return &bot{cfg: cfg, store: store, clock: clk, log: log, version: version,
		host: hostname(), pid: os.Getpid(), boot: clk.Now()}
}

// execute runs cmd for who (the sender, used in acknowledgement comments) and returns the
// reply. It never panics: an internal error or a panic becomes the "Oops" reply.
func (b *bot) execute(ctx context.Context, cmd Command, who string) (reply string) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error("command panicked", zap.Any("panic", r), zap.String("command", commandName(cmd)),
				zap.Stack("stack"))
			reply = oops
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	now := b.clock.Now()
	var err error
	switch c := cmd.(type) {
	case AckID:
		reply, err = b.ackID(ctx, c, who, now)
	case Help:
		reply = b.help()
	case Identify:
		reply = b.identify(now)
	case OnCall:
		reply, err = b.onCall(ctx, c, now)
	case TestNotifications:
		reply, err = b.testNotifications(ctx, c, who, now)
	case TellMeAbout:
		reply, err = b.tellMeAbout(ctx, c, now)
	case FindEntities:
		reply, err = b.findEntities(ctx, c)
	case FindChecks:
		reply, err = b.findChecks(ctx, c)
	case StatusEntities:
		reply, err = b.status(ctx, ".*", c.Pattern, now)
	case StatusChecks:
		reply, err = b.status(ctx, c.CheckPattern, c.EntityPattern, now)
	case AckEntities:
		reply, err = b.ackFailing(ctx, "", c.Pattern, c.Comment, c.Duration, who, now, "found no matching entities with failing checks")
	case AckChecks:
		reply, err = b.ackFailing(ctx, c.CheckPattern, c.EntityPattern, c.Comment, c.Duration, who, now, "found no matching failing checks")
	case MaintEntities:
		reply, err = b.maintEntities(ctx, c, who, now)
	case Invalid:
		reply = c.Reply
	case Unknown:
		reply = fmt.Sprintf("what do you mean, '%s'? Type 'help' for a list of acceptable commands.", c.Text)
	default:
		err = fmt.Errorf("unhandled command %T", cmd)
	}
	if err != nil {
		b.log.Error("command failed", zap.String("command", commandName(cmd)), zap.String("who", who), zap.Error(err))
		return oops
	}
	return reply
}

// commandName is a command's type name, for logs ("AckID", "Help" ...).
func commandName(cmd Command) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", cmd), "jabber.")
}

func (b *bot) ackID(ctx context.Context, c AckID, who string, now time.Time) (string, error) {
	if c.Comment == "" {
		return fmt.Sprintf(`ERROR - couldn't ACK %s - please provide a comment, eg "%s: ACKID %s AL looking"`, c.Hash, b.cfg.Alias, c.Hash), nil
	}
	ref, found, err := b.store.CheckByHash(ctx, c.Hash)
	if err != nil {
		return "", err
	}
	if !found {
		return fmt.Sprintf("ERROR - couldn't ACK %s - not found", c.Hash), nil
	}
	status, err := b.store.CheckStatuses(ctx, now, []model.CheckRef{ref})
	if err != nil {
		return "", err
	}
	duration := b.cfg.AckDuration
	if c.Duration > 0 {
		duration = c.Duration
	}
	ev := events.Acknowledgement(ref.Entity, ref.Check, summaryFrom(who, c.Comment), duration, now)
	ev.AcknowledgementID = c.Hash
	if err := validEvent(ev); err != nil {
		return fmt.Sprintf("ERROR - couldn't ACK %s - %v", c.Hash, err), nil
	}
	if err := b.store.Enqueue(ctx, ev); err != nil {
		return "", err
	}
	b.log.Info("acknowledgement requested", zap.String("check", ref.ID()), zap.String("who", who),
		zap.Duration("duration", duration))
	verb := "ACKing"
	if len(status) == 1 && status[0].InUnscheduledMaintenance() {
		verb = "Changing ACK for"
	}
	reply := fmt.Sprintf("%s %s on %s (%s)", verb, ref.Check, ref.Entity, c.Hash)
	if c.DurationProblem != "" {
		reply += fmt.Sprintf(" - %s, so it lasts %s (the default)", c.DurationProblem, humantime.Words(duration))
	}
	if len(status) == 1 && status[0].State == schema.StateOK {
		reply += " - note: the check is OK at the moment; an acknowledgement only applies while it fails"
	}
	return reply, nil
}

func summaryFrom(who, text string) string {
	if who == "" {
		return text
	}
	return who + ": " + text
}

// validEvent checks an event the way the executive will, so the user hears about a problem now.
func validEvent(ev schema.Event) error {
	raw, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_, err = schema.ParseEvent(raw)
	return err
}

func (b *bot) testNotifications(ctx context.Context, c TestNotifications, who string, now time.Time) (string, error) {
	exists, err := b.store.EntityExists(ctx, c.Entity)
	if err != nil {
		return "", err
	}
	if !exists {
		return fmt.Sprintf("I can't see an entity called '%s'", c.Entity), nil
	}
	summary := fmt.Sprintf("Testing notifications to all contacts interested in entity: %s, check: %s", c.Entity, c.Check)
	ev := schema.Event{
		Entity: c.Entity, Check: c.Check, Type: schema.TypeAction, State: schema.StateTestNotifications,
		Summary: summary, Time: now.Unix(), HasTime: true,
	}
	if who != "" {
		ev.Details = "requested by " + who + " over Jabber"
	}
	if err := validEvent(ev); err != nil {
		return fmt.Sprintf("ERROR - couldn't test notifications - %v", err), nil
	}
	if err := b.store.Enqueue(ctx, ev); err != nil {
		return "", err
	}
	b.log.Info("test notifications requested", zap.String("check", schema.CheckID(c.Entity, c.Check)), zap.String("who", who))
	return summary, nil
}

func (b *bot) tellMeAbout(ctx context.Context, c TellMeAbout, now time.Time) (string, error) {
	exists, err := b.store.EntityExists(ctx, c.Entity)
	if err != nil {
		return "", err
	}
	if !exists {
		return fmt.Sprintf("I can't see an entity called '%s'", c.Entity), nil
	}
	checks := []string{c.Check}
	header := "Entity: " + c.Entity
	if c.Check == "" {
		current, err := b.store.CurrentChecks(ctx, []string{c.Entity})
		if err != nil {
			return "", err
		}
		checks = current[c.Entity]
		if len(checks) == 0 {
			return header + " has no current checks", nil
		}
	} else {
		header += ", check: " + c.Check
	}
	truncated := 0
	if len(checks) > maxStatusLines/3 {
		truncated = len(checks) - maxStatusLines/3
		checks = checks[:maxStatusLines/3]
	}
	refs := make([]model.CheckRef, len(checks))
	for i, ch := range checks {
		refs[i] = model.CheckRef{Entity: c.Entity, Check: ch}
	}
	statuses, err := b.store.CheckStatuses(ctx, now, refs)
	if err != nil {
		return "", err
	}
	lines := []string{header}
	for _, s := range statuses {
		lines = append(lines, b.describe(s, now)...)
	}
	if truncated > 0 {
		lines = append(lines, fmt.Sprintf("... and %d more checks (ask about one with 'tell me about %s:<check>')", truncated, c.Entity))
	}
	return strings.Join(lines, "\n"), nil
}

// describe words one check's state and maintenance for "tell me about".
func (b *bot) describe(s views.CheckStatus, now time.Time) []string {
	state := "never seen"
	if s.State != "" {
		state = gateways.StateWords(s.State)
		if s.LastChange > 0 {
			state += " since " + b.formatTime(s.LastChange, now)
		}
	}
	if !s.Enabled && s.State != "" {
		state += " (disabled: not a current check)"
	}
	return []string{
		s.Check + ": " + state,
		"  scheduled maintenance: " + b.window(s.Scheduled, s.ScheduledSummary, now),
		"  unscheduled maintenance: " + b.window(s.Unscheduled, s.UnscheduledSummary, now),
	}
}

func (b *bot) window(w checkstate.Window, summary string, now time.Time) string {
	if w.End == 0 {
		return "none"
	}
	remaining := time.Duration(w.End-now.Unix()) * time.Second
	s := fmt.Sprintf("%s → %s (%s remaining)", b.formatTime(w.Start, now), b.formatTime(w.End, now), humantime.Words(remaining))
	if summary != "" {
		s += ": " + summary
	}
	return s
}

func (b *bot) formatTime(unix int64, now time.Time) string {
	return time.Unix(unix, 0).In(now.Location()).Format("2006-01-02 15:04:05 MST")
}

// matchingEntities returns the known entity names matching pattern, sorted.
func (b *bot) matchingEntities(ctx context.Context, pattern string) ([]string, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	names, err := b.store.EntityNames(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if re.MatchString(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (b *bot) findEntities(ctx context.Context, c FindEntities) (string, error) {
	names, err := b.matchingEntities(ctx, c.Pattern)
	if err != nil {
		return "", err
	}
	switch total := len(names); {
	case total == 0:
		return fmt.Sprintf("No entities match /%s/", c.Pattern), nil
	case total > maxEntitiesListed:
		return fmt.Sprintf("Entities matching /%s/ (%d, showing the first %d): %s", c.Pattern, total, maxEntitiesListed,
			strings.Join(names[:maxEntitiesListed], ", ")), nil
	default:
		return fmt.Sprintf("Entities matching /%s/ (%d): %s", c.Pattern, total, strings.Join(names, ", ")), nil
	}
}

func (b *bot) findChecks(ctx context.Context, c FindChecks) (string, error) {
	checkRE, err := regexp.Compile(c.CheckPattern) // "" matches everything
	if err != nil {
		return "", err
	}
	matching := ""
	if c.CheckPattern != "" {
		matching = fmt.Sprintf(" matching /%s/", c.CheckPattern)
	}
	entities := []string{c.Entity}
	if c.Entity != "" {
		exists, err := b.store.EntityExists(ctx, c.Entity)
		if err != nil {
			return "", err
		}
		if !exists {
			return fmt.Sprintf("I can't see an entity called '%s'", c.Entity), nil
		}
	} else {
		if entities, err = b.matchingEntities(ctx, c.EntityPattern); err != nil {
			return "", err
		}
		if len(entities) == 0 {
			return fmt.Sprintf("No entities match /%s/", c.EntityPattern), nil
		}
	}
	more := 0
	if len(entities) > maxEntitiesListed {
		more = len(entities) - maxEntitiesListed
		entities = entities[:maxEntitiesListed]
	}
	current, err := b.store.CurrentChecks(ctx, entities)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, e := range entities {
		var checks []string
		for _, ch := range current[e] {
			if checkRE.MatchString(ch) {
				checks = append(checks, ch)
			}
		}
		if len(checks) == 0 {
			lines = append(lines, fmt.Sprintf("%s has no checks%s", e, matching))
			continue
		}
		lines = append(lines, fmt.Sprintf("Checks%s on %s: %s", matching, e, strings.Join(checks, ", ")))
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("... and %d more entities", more))
	}
	return strings.Join(lines, "\n"), nil
}

// status lists "entity:check: state" for the current checks matching checkPattern on the
// entities matching entityPattern.
func (b *bot) status(ctx context.Context, checkPattern, entityPattern string, now time.Time) (string, error) {
	checkRE, err := regexp.Compile(checkPattern)
	if err != nil {
		return "", err
	}
	entities, err := b.matchingEntities(ctx, entityPattern)
	if err != nil {
		return "", err
	}
	if len(entities) == 0 {
		return fmt.Sprintf("No entities match /%s/", entityPattern), nil
	}
	current, err := b.store.CurrentChecks(ctx, entities)
	if err != nil {
		return "", err
	}
	var refs []model.CheckRef
	total := 0
	for _, e := range entities {
		for _, ch := range current[e] {
			if !checkRE.MatchString(ch) {
				continue
			}
			total++
			if len(refs) < maxStatusLines {
				refs = append(refs, model.CheckRef{Entity: e, Check: ch})
			}
		}
	}
	if total == 0 {
		return fmt.Sprintf("No current checks matching /%s/ on entities matching /%s/", checkPattern, entityPattern), nil
	}
	statuses, err := b.store.CheckStatuses(ctx, now, refs)
	if err != nil {
		return "", err
	}
	lines := make([]string, 0, len(statuses)+1)
	for _, s := range statuses {
		state := s.State
		if state == "" {
			state = "never seen"
		}
		lines = append(lines, fmt.Sprintf("%s:%s: %s", s.Entity, s.Check, state))
	}
	if total > len(refs) {
		lines = append(lines, fmt.Sprintf("... and %d more (narrow the patterns to see them)", total-len(refs)))
	}
	return strings.Join(lines, "\n"), nil
}

// ackFailing acknowledges the failing current checks matching checkPattern ("" = all) on the
// entities matching entityPattern: one acknowledgement event each, queued together.
func (b *bot) ackFailing(ctx context.Context, checkPattern, entityPattern, comment string, duration time.Duration,
	who string, now time.Time, noneFailing string) (string, error) {
	checkRE, err := regexp.Compile(checkPattern)
	if err != nil {
		return "", err
	}
	entities, err := b.matchingEntities(ctx, entityPattern)
	if err != nil {
		return "", err
	}
	if len(entities) == 0 {
		return fmt.Sprintf("found no entities matching /%s/", entityPattern), nil
	}
	failing, err := b.store.FailingChecks(ctx)
	if err != nil {
		return "", err
	}
	var refs []model.CheckRef
	for _, e := range entities {
		for _, ch := range failing[e] {
			if checkRE.MatchString(ch) {
				refs = append(refs, model.CheckRef{Entity: e, Check: ch})
			}
		}
	}
	if len(refs) == 0 {
		return noneFailing, nil
	}
	summary := summaryFrom(who, commentOrDefault(comment))
	evs := make([]schema.Event, len(refs))
	for i, r := range refs {
		evs[i] = events.Acknowledgement(r.Entity, r.Check, summary, duration, now)
	}
	if err := b.store.Enqueue(ctx, evs...); err != nil {
		var invalid *events.InvalidError
		if errors.As(err, &invalid) {
			return fmt.Sprintf("ERROR - couldn't ACK - %v", invalid), nil
		}
		return "", err
	}
	b.log.Info("bulk acknowledgement requested", zap.Int("checks", len(refs)), zap.String("entities", entityPattern),
		zap.String("checks_matching", checkPattern), zap.String("who", who), zap.Duration("duration", duration))
	lines := checkList("Ack list:", refs)
	lines = append(lines, fmt.Sprintf("%s acknowledged for %s", countChecks(len(refs)), humantime.Words(duration)))
	return strings.Join(lines, "\n"), nil
}

// maintEntities creates scheduled maintenance on every current check of the matching entities.
func (b *bot) maintEntities(ctx context.Context, c MaintEntities, who string, now time.Time) (string, error) {
	start := now.Add(c.StartIn)
	if c.StartAt != "" {
		t, err := startTime(c.StartAt, now)
		if err != nil {
			return "ERROR - " + err.Error() + " - nothing was scheduled", nil
		}
		start = t
	}
	start = start.Truncate(time.Second)
	if !start.Add(c.Duration).After(now) {
		return fmt.Sprintf("ERROR - maintenance from %s for %s would already be over - nothing was scheduled",
			b.formatTime(start.Unix(), now), humantime.Words(c.Duration)), nil
	}
	entities, err := b.matchingEntities(ctx, c.Pattern)
	if err != nil {
		return "", err
	}
	if len(entities) == 0 {
		return fmt.Sprintf("found no entities matching /%s/", c.Pattern), nil
	}
	current, err := b.store.CurrentChecks(ctx, entities)
	if err != nil {
		return "", err
	}
	var refs []model.CheckRef
	for _, e := range entities {
		for _, ch := range current[e] {
			refs = append(refs, model.CheckRef{Entity: e, Check: ch})
		}
	}
	if len(refs) == 0 {
		return "found no matching entities with active checks", nil
	}
	summary := summaryFrom(who, commentOrDefault(c.Comment))
	created, err := b.store.CreateScheduledMaintenance(ctx, refs, start, c.Duration, summary, now)
	if err != nil {
		if created == 0 {
			return "", err
		}
		b.log.Error("command failed part way", zap.String("command", "MaintEntities"), zap.String("who", who),
			zap.Int("created", created), zap.Int("checks", len(refs)), zap.Error(err))
		return fmt.Sprintf("%s; scheduled maintenance was created on the first %d of the %d checks (in the order of 'find checks on entities matching /%s/') before it",
			oops, created, len(refs), c.Pattern), nil
	}
	b.log.Info("scheduled maintenance created", zap.Int("checks", len(refs)), zap.String("entities", c.Pattern),
		zap.String("who", who), zap.Time("start", start), zap.Duration("duration", c.Duration))
	lines := checkList("Maint list:", refs)
	lines = append(lines, fmt.Sprintf("%s in scheduled maintenance from %s for %s", countChecks(len(refs)),
		b.formatTime(start.Unix(), now), humantime.Words(c.Duration)))
	return strings.Join(lines, "\n"), nil
}

func commentOrDefault(comment string) string {
	if comment == "" {
		return defaultComment
	}
	return comment
}

// checkList is header and one "entity:check" line per check, at most maxStatusLines of them
// and then how many more there are.
func checkList(header string, refs []model.CheckRef) []string {
	lines := []string{header}
	for i, r := range refs {
		if i == maxStatusLines {
			lines = append(lines, fmt.Sprintf("... and %d more", len(refs)-i))
			break
		}
		lines = append(lines, r.ID())
	}
	return lines
}

func countChecks(n int) string {
	if n == 1 {
		return "1 check"
	}
	return fmt.Sprintf("%d checks", n)
}

func (b *bot) help() string {
	a := b.cfg.Alias
	return strings.Join([]string{
		"commands (in a room, address me first: '" + a + ": <command>'):",
		"  ACKID <hash> <comment> [duration: <time>] - acknowledge the alert with that ACKID (default " + humantime.Words(b.cfg.AckDuration) + ")",
		"  test notifications for <entity>[:<check>] - send a test notification (check default '" + DefaultTestCheck + "')",
		"  tell me about <entity>[:<check>] - state and maintenance of an entity's checks",
		"  find entities matching /<regex>/ - list entities",
		"  find checks [matching /<regex>/] on <entity> - list an entity's checks (or: on entities matching /<regex>/)",
		"  status entities /<regex>/ - state of every check of the matching entities",
		"  status checks /<regex>/ [on /<regex>/] - state of the matching checks",
		"  ack entities /<regex>/ [comment] [duration: <time>] - acknowledge every failing check of the matching entities (default " + humantime.Words(DefaultBulkDuration) + ")",
		"  ack checks /<regex>/ on /<regex>/ [comment] [duration: <time>] - acknowledge the matching failing checks of the matching entities (default " + humantime.Words(DefaultBulkDuration) + ")",
		"  maint entities /<regex>/ [comment] [start-in: <time>] [start-at: <time>] [duration: <time>] - scheduled maintenance on every check of the matching entities (default: from now for " + humantime.Words(DefaultBulkDuration) + ")",
		"  oncall [<schedule>] - who is on call now, why, until when, and who is next",
		"  identify - who and where I am",
		"  help - this list",
		"regexes are Go RE2 (prefix (?i) to ignore case); durations like '90 minutes', '2h', '1 day'; start-at like '22:00', '10pm', 'tomorrow 06:30', '2026-01-06 22:00'",
	}, "\n")
}

func (b *bot) identify(now time.Time) string {
	return fmt.Sprintf("flapjack %s (Jabber gateway, %s %s/%s) pid %d on %s; I answer to %s; booted at %s, up %s",
		b.version, runtime.Version(), runtime.GOOS, runtime.GOARCH, b.pid, b.host,
		strings.Join(b.cfg.identifiers(), ", "), b.boot.Format("2006-01-02 15:04:05 MST"),
		humantime.Words(now.Sub(b.boot)))
}
