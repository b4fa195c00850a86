package importer

import (
	"context"
	"encoding/json"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/jsonfield"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// Rules imports a Flapjack 1.x notification rules file: an array of rule objects, or
// {"notification_rules": [...]}, each with the fields of a contact's notification_rules entry
// plus a required "id" and "contact_id". The contact must exist already (import contacts
// first). Each rule replaces notification_rule:ID and joins contact_notification_rules:CID; the
// contact's other rules are left alone, so a rules file adds and updates rules and never deletes
// one. A rule id that belongs to another contact is a problem. Re-importing the same file leaves
// Redis unchanged. The rules are written by roster.PutRules.
func Rules(ctx context.Context, conn redis.Conn, keys schema.Keys, data []byte, opts Options) (Report, error) {
	raws, err := records(data, "notification_rules")
	if err != nil {
		return Report{}, err
	}
	rep, written, err := importKeyed(raws, parseRuleRecord, func(rules []roster.Rule, o roster.ReplaceOptions) (roster.BulkResult, error) {
		return roster.PutRules(ctx, conn, keys, rules, o)
	}, opts)
	if err != nil {
		return rep, err
	}
	for _, r := range written {
		rep.Notes = append(rep.Notes, roster.RuleWarnings(r.value)...)
	}
	return rep, nil
}

// parseRuleRecord reads one record of a rules file. Its id is required: a generated one would
// depend on the record's position in this file, and could collide with the ids generated for
// rules imported with their contact.
func parseRuleRecord(index int, raw json.RawMessage) (*keyed[roster.Rule], []Problem) {
	c := &check{index: index}
	obj, ok := c.object(raw, "")
	if !ok {
		return nil, c.problems
	}
	c.id = recordID(c, obj["id"])
	contactID, _ := c.ident(obj["contact_id"], "contact_id")
	if jsonfield.IsNull(obj["contact_id"]) {
		c.fail("contact_id", "is required")
	}
	if !c.ok() {
		return nil, c.problems
	}
	r, ok := parseRule(c, "", contactID, index, raw)
	if !ok {
		return nil, c.problems
	}
	return &keyed[roster.Rule]{index: index, id: r.ID, value: r}, nil
}
