package importer

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/internal/jsonfield"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// Escalations imports an escalation policies file (`flapjack import escalations -f FILE`): an
// array of policies, or {"escalation_policies": [...]}. Fields:
//
//	id              required: letters, digits, '.', '_', '-'
//	name            optional text
//	entities, regex_entities, tags (alias entity_tags), regex_tags   the matching of
//	                notification rules: every non-empty criterion must hold
//	checks          check names the policy covers (empty: every check)
//	severities      which problem severities escalate: critical, warning, unknown (empty: all)
//	steps           required, in order: {"delay": "15 minutes", "contacts": ["bob"],
//	                "schedules": ["web-primary"], "media": ["sms"]}; delay in Flapjack duration
//	                words or seconds, counted from the first problem alert; contacts and/or
//	                schedules (each schedule alerts whoever is on call when the step fires);
//	                media optional (default: what the contact's rules choose)
//	repeat          re-alert the last step every this long until handled (default: never)
//	restart_after   how long after a ladder stopped a new problem resumes it rather than
//	                starting again from step 1 (default 30 minutes)
//
// The contacts and schedules must exist (import contacts and schedules first). A policy replaces the one stored under its
// id; policies not in the file are left alone. Written by roster.PutEscalationPolicies.
func Escalations(ctx context.Context, conn redis.Conn, keys schema.Keys, data []byte, opts Options) (Report, error) {
	raws, err := records(data, "escalation_policies")
	if err != nil {
		return Report{}, err
	}
	rep, _, err := importKeyed(raws, func(i int, raw json.RawMessage) (*keyed[roster.EscalationPolicy], []Problem) {
		p, problems := ParsePolicy(i, raw)
		return &keyed[roster.EscalationPolicy]{index: i, id: p.ID, value: p}, problems
	}, func(policies []roster.EscalationPolicy, o roster.ReplaceOptions) (roster.BulkResult, error) {
		return roster.PutEscalationPolicies(ctx, conn, keys, policies, o)
	}, opts)
	return rep, err
}

var policyFields = map[string]bool{"id": true, "name": true, "entities": true, "regex_entities": true, "tags": true,
	"entity_tags": true, "regex_tags": true, "checks": true, "severities": true, "steps": true, "repeat": true,
	"restart_after": true, "links": true, "type": true}

var stepFields = map[string]bool{"delay": true, "contacts": true, "schedules": true, "media": true}

// ParsePolicy reads one policy record (the JSON API's POST /escalation_policies reads its items
// with it too) and checks its values with roster.ValidateEscalationPolicy.
func ParsePolicy(index int, raw json.RawMessage) (roster.EscalationPolicy, []Problem) {
	var p roster.EscalationPolicy
	c := &check{index: index}
	obj, ok := c.object(raw, "")
	if !ok {
		return p, c.problems
	}
	p.ID, _ = c.ident(obj["id"], "id")
	c.id = p.ID
	if p.ID == "" {
		c.fail("id", "is required")
	}
	c.unknown(obj, "", policyFields)
	p.Name = c.str(obj["name"], "name")
	p.Entities = c.strings(obj["entities"], "entities")
	p.RegexEntities = c.regexes(obj["regex_entities"], "regex_entities")
	p.Tags = c.strings(obj["tags"], "tags")
	p.Tags = append(p.Tags, c.strings(obj["entity_tags"], "entity_tags")...)
	p.RegexTags = c.regexes(obj["regex_tags"], "regex_tags")
	p.Checks = c.strings(obj["checks"], "checks")
	p.Severities = c.strings(obj["severities"], "severities")
	p.Repeat = c.duration(obj["repeat"], "repeat")
	p.RestartAfter = c.duration(obj["restart_after"], "restart_after")
	if jsonfield.IsNull(obj["steps"]) {
		c.fail("steps", "is required")
	}
	c.list(obj["steps"], "steps", "objects", func(i int, item json.RawMessage) {
		field := jsonfield.At("steps", i)
		so, ok := c.object(item, field)
		if !ok {
			return
		}
		c.unknown(so, field, stepFields)
		if jsonfield.IsNull(so["delay"]) {
			c.fail(field+".delay", "is required (\"0 minutes\" for at once)")
		}
		p.Steps = append(p.Steps, roster.EscalationStep{Delay: c.duration(so["delay"], field+".delay"),
			Contacts: c.idents(so["contacts"], field+".contacts"), Schedules: c.idents(so["schedules"], field+".schedules"),
			Media: c.strings(so["media"], field+".media")})
	})
	if err := roster.ValidateEscalationPolicy(p); err != nil {
		reported := map[string]bool{}
		for _, pr := range c.problems {
			reported[pr.Field] = true
		}
		for _, f := range err.(*roster.ValidationError).Errors {
			if !reported[f.Field] { // a value that could not be read is reported once
				c.fail(f.Field, "%s", f.Reason)
			}
		}
	}
	return p, c.problems
}

// duration reads Flapjack duration words ("15 minutes") or whole seconds; absent is 0.
func (c *check) duration(raw json.RawMessage, field string) int64 {
	if jsonfield.IsNull(raw) {
		return 0
	}
	var text string
	switch jsonfield.First(raw) {
	case '"':
		_ = json.Unmarshal(raw, &text)
	default:
		var n int64
		if json.Unmarshal(raw, &n) != nil || n < 0 {
			c.fail(field, "must be a duration such as \"15 minutes\" or a number of seconds")
			return 0
		}
		return n
	}
	d, err := humantime.Parse(text)
	if err != nil {
		c.fail(field, "%v", err)
		return 0
	}
	return int64(d / time.Second)
}
