package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// ruleRecord is a well-formed record of a rules file.
type ruleRecord struct {
	index int
	rule  model.Rule
}

// Rules imports a Flapjack 1.x notification rules file: an array of rule objects, or
// {"notification_rules": [...]}, each with the fields of a contact's notification_rules entry
// plus a required "id" and "contact_id". The contact must exist already (import contacts
// first). Each rule replaces notification_rule:ID and joins contact_notification_rules:CID; the
// contact's other rules are left alone, so a rules file adds and updates rules and never deletes
// one. A rule id that belongs to another contact is a problem. Re-importing the same file leaves
// Redis unchanged. The rules are written by model.PutRules.
func Rules(ctx context.Context, conn redis.Conn, keys schema.Keys, data []byte, opts Options) (Report, error) {
	raws, err := records(data, "notification_rules")
	if err != nil {
		return Report{}, err
	}
	var rep Report
	bad := map[int]bool{}
	firstUse := map[string]int{} // rule id -> record that uses it first
	valid := parseRecords(raws, parseRuleRecord, func(i int, r *ruleRecord) []Problem {
		if prev, dup := firstUse[r.rule.ID]; dup {
			return []Problem{{Index: i, ID: r.rule.ID, Field: "id", Reason: fmt.Sprintf("duplicate of record %d", prev)}}
		}
		firstUse[r.rule.ID] = i
		return nil
	}, &rep, bad)
	rules := make([]model.Rule, len(valid))
	for i, r := range valid {
		rules[i] = r.rule
	}
	res, err := model.PutRules(ctx, conn, keys, rules,
		model.ReplaceOptions{Partial: opts.Partial, DryRun: opts.DryRun || (len(bad) > 0 && !opts.Partial)})
	if err != nil {
		return Report{}, err
	}
	for _, p := range res.Problems {
		r := valid[p.Index]
		reason := p.Reason
		if errors.Is(p.Err, model.ErrNotFound) {
			reason += " (import contacts first)"
		}
		rep.Problems = append(rep.Problems, Problem{Index: r.index, ID: r.rule.ID, Field: p.Field, Reason: reason})
		bad[r.index] = true
	}
	if err := outcome(&rep, len(raws), bad, opts); err != nil {
		return rep, err
	}
	for _, r := range valid {
		if !bad[r.index] {
			rep.Notes = append(rep.Notes, model.RuleWarnings(r.rule)...)
		}
	}
	rep.Writes = res.Writes
	return rep, nil
}

// parseRuleRecord reads one record of a rules file. Its id is required: a generated one would
// depend on the record's position in this file, and could collide with the ids generated for
// rules imported with their contact.
func parseRuleRecord(index int, raw json.RawMessage) (*ruleRecord, []Problem) {
	c := &check{index: index}
	obj, ok := c.object(raw, "")
	if !ok {
		return nil, c.problems
	}
	c.id = recordID(c, obj["id"])
	contactID, _ := c.ident(obj["contact_id"], "contact_id")
	if isNull(obj["contact_id"]) {
		c.fail("contact_id", "is required")
	}
	if !c.ok() {
		return nil, c.problems
	}
	r, ok := parseRule(c, "", contactID, index, raw)
	if !ok {
		return nil, c.problems
	}
	return &ruleRecord{index: index, rule: r}, nil
}
