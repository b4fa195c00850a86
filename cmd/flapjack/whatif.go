package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/whatif"
)

func whatifCommand() *cli.Command {
	return &cli.Command{
		Name:  "whatif",
		Usage: "replay recorded history against candidate rules or settings: who would have been alerted, and for what",
		Description: `Reads the history of --from..--until from the configured Redis (only reads: nothing in it
changes): the raw event archive (events_archive:YYYYMMDDHH, kept when executive.archive_events is
on), else a timeline reconstructed from each check's state changes, acknowledgements and scheduled
maintenance (repeats between changes are synthesised at the check's observed interval; rebuilt
events carry their check's tags). The live
contacts, media, rules and entities are copied into two scratch spaces (embedded Redis servers,
or private key prefixes of --scratch-redis); the baseline runs them as they are, the candidate
with --contacts / --rules (Flapjack 1.x import files, as 'flapjack import' reads them) and --set
executive.*/notifier.* settings. Both runs go through the real executive and notifier on
simulated time. Prints alerts per contact and medium before -> after, alerts in --quiet-hours
(each contact's timezone), failures that reached nobody, the longest unnotified failure and the
alerts that appear or disappear. Progress goes to stderr.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Required: true, Usage: "start: RFC 3339, unix seconds, \"2026-01-05 10:00\", or a time ago (7d, \"3 days ago\")"},
			&cli.StringFlag{Name: "until", Value: "now", Usage: "end, as --from"},
			&cli.StringFlag{Name: "entity", Usage: "only entities matching this regular expression"},
			&cli.StringFlag{Name: "check", Usage: "only checks matching this regular expression"},
			&cli.StringSliceFlag{Name: "tags", Usage: "only checks carrying all these tags (comma-separated)"},
			&cli.StringFlag{Name: "contacts", Usage: "candidate contacts: a Flapjack 1.x contacts import file"},
			&cli.StringFlag{Name: "rules", Usage: "candidate notification rules: a Flapjack 1.x rules import file"},
			&cli.StringFlag{Name: "escalations", Usage: "candidate escalation policies: a `flapjack import escalations` file (live policies are copied otherwise)"},
			&cli.StringFlag{Name: "schedules", Usage: "candidate on-call schedules: a `flapjack import schedules` file, replacing the live schedules of the same ids"},
			&cli.StringSliceFlag{Name: "set", Usage: "candidate setting, key=value (executive.* or notifier.*; repeatable)"},
			&cli.StringFlag{Name: "quiet-hours", Usage: "count alerts inside this daily window of each contact's time, e.g. 22:00-07:00"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text or json"},
			&cli.StringFlag{Name: "source", Value: whatif.SourceAuto, Usage: "history: auto (the archive when it has the range), archive or state_history"},
			&cli.DurationFlag{Name: "repeat-interval", Value: time.Minute, Usage: "state history: repeat interval of checks whose interval cannot be observed (0 = none)"},
			&cli.BoolFlag{Name: "all-events", Usage: "also replay ok results of checks already ok (they decide nothing; left out by default)"},
			&cli.StringFlag{Name: "scratch-redis", Usage: "redis:// URL of a Redis for the scratch spaces (private key prefixes, deleted after); default: embedded servers"},
		},
		Action: oneShot(runWhatif),
	}
}

func runWhatif(c *cli.Context, rt *runtime) error {
	now := rt.clock.Now()
	from, err := parsePastTime(c.String("from"), now)
	if err != nil {
		return usageError("--from: %v", err)
	}
	until, err := parsePastTime(c.String("until"), now)
	if err != nil {
		return usageError("--until: %v", err)
	}
	if !until.After(from) {
		return usageError("--until (%s) must be after --from (%s)", until.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return usageError("--format: %q is not text or json", format)
	}
	h := whatif.History{From: from, Until: until, Source: c.String("source"), RepeatInterval: c.Duration("repeat-interval"),
		KeepOKRepeats: c.Bool("all-events")}
	switch h.Source {
	case whatif.SourceAuto, whatif.SourceArchive, whatif.SourceStates:
	default:
		return usageError("--source: %q is not auto, archive or state_history", h.Source)
	}
	for _, f := range []struct {
		name string
		re   **regexp.Regexp
	}{{"entity", &h.Filter.Entity}, {"check", &h.Filter.Check}} {
		if s := c.String(f.name); s != "" {
			if *f.re, err = regexp.Compile(s); err != nil {
				return usageError("--%s: %v", f.name, err)
			}
		}
	}
	h.Filter.Tags = splitTags(c.StringSlice("tags"))
	// The two replays would log every notification and alert at info: stderr is for progress.
	quiet := rt.log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))
	o := whatif.Options{Live: rt.pool, LiveKeys: rt.keys, History: h, Progress: c.App.ErrWriter, Log: quiet,
		Version: version, Identity: rt.identity}
	if s := c.String("quiet-hours"); s != "" {
		if o.QuietHours, err = whatif.ParseQuietHours(s); err != nil {
			return usageError("--quiet-hours: %v", err)
		}
	}
	for _, f := range []struct {
		name string
		data *[]byte
	}{{"contacts", &o.ContactsFile}, {"rules", &o.RulesFile}, {"escalations", &o.EscalationsFile}, {"schedules", &o.SchedulesFile}} {
		if p := c.String(f.name); p != "" {
			if *f.data, err = os.ReadFile(p); err != nil {
				return usageError("--%s: %v", f.name, err)
			}
		}
	}
	if o.Baseline.Executive, err = rt.executiveConfig(); err != nil {
		return err
	}
	if o.Baseline.Notifier, err = rt.notifierConfig(); err != nil {
		return err
	}
	o.DefaultTimezone = o.Baseline.Notifier.DefaultTimezone
	cand, err := candidateRuntime(c, rt)
	if err != nil {
		return err
	}
	if o.Candidate.Executive, err = cand.executiveConfig(); err != nil {
		return err
	}
	if o.Candidate.Notifier, err = cand.notifierConfig(); err != nil {
		return err
	}
	scratch := c.String("scratch-redis")
	spaces, cleanup, err := whatif.OpenSpaces(c.Context, scratch, rt.log)
	if errors.Is(err, whatif.ErrScratchURL) {
		return usageError("--scratch-redis: %v", err)
	}
	if err != nil {
		return err
	}
	defer cleanup()
	o.Baseline.Space, o.Candidate.Space = spaces[0], spaces[1]
	o.OpenSpaces = func(ctx context.Context) ([2]whatif.Space, func(), error) {
		return whatif.OpenSpaces(ctx, scratch, rt.log)
	}
	rep, err := whatif.Run(c.Context, o)
	if err != nil {
		return cli.Exit("whatif stopped: "+err.Error(), 1)
	}
	if format == "json" {
		return rep.WriteJSON(c.App.Writer)
	}
	return rep.WriteText(c.App.Writer)
}

// parsePastTime is parseTime plus times ago: "-7d", "7d", "3 days ago".
func parsePastTime(s string, now time.Time) (time.Time, error) {
	if t, err := parseTime(s, now); err == nil {
		return t, nil
	}
	text := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "ago"))
	if d, err := humantime.Parse(strings.TrimPrefix(text, "-")); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("cannot read time %q: use now, 7d (ago), \"3 days ago\", unix seconds, RFC 3339 or \"2026-01-05 10:00\"", s)
}

func splitTags(in []string) []string {
	var tags []string
	for _, t := range in {
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				tags = append(tags, s)
			}
		}
	}
	return tags
}

// candidateRuntime is rt with the --set settings applied, validated by the settings table as
// if they had been given as flags.
func candidateRuntime(c *cli.Context, rt *runtime) (*runtime, error) {
	table := media.Table()
	set := map[string]string{}
	for _, kv := range c.StringSlice("set") {
		key, value, ok := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		if !ok {
			return nil, usageError("--set %q: want key=value, e.g. executive.initial_failure_delay=5m", kv)
		}
		s, known := table.Lookup(key)
		if !known {
			return nil, usageError("--set %q: no setting %q (see flapjack help settings)", kv, key)
		}
		if !strings.HasPrefix(key, "executive.") && !strings.HasPrefix(key, "notifier.") {
			return nil, usageError("--set %q: only executive.* and notifier.* settings change what a replay decides", kv)
		}
		set[s.Flag()] = value
	}
	if len(set) == 0 {
		return rt, nil
	}
	v, err := config.Load(table, configPath(c), overlaySource{base: settingSource{c}, set: set}, os.Environ())
	if err != nil {
		return nil, cli.Exit("--set: "+err.Error(), 2)
	}
	cand := *rt
	cand.values = v
	return &cand, nil
}

// overlaySource is the command line with --set values as if they were flags.
type overlaySource struct {
	base config.Source
	set  map[string]string
}

func (s overlaySource) IsSet(name string) bool { _, ok := s.set[name]; return ok || s.base.IsSet(name) }

func (s overlaySource) String(name string) string {
	if v, ok := s.set[name]; ok {
		return v
	}
	return s.base.String(name)
}
