package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// ruleRecord is a valid record of a rules file.
type ruleRecord struct {
	index     int
	contactID string
	rule      rule
	notes     []string
}

// Rules imports a Flapjack 1.x notification rules file: an array of rule objects, or
// {"notification_rules": [...]}, each with the fields of a contact's notification_rules entry
// plus a required "id" and "contact_id". The contact must exist already (import contacts
// first). Each rule replaces notification_rule:ID and joins contact_notification_rules:CID; the
// contact's other rules are left alone, so a rules file adds and updates rules and never deletes
// one. A rule id that belongs to another contact is a problem. Re-importing the same file leaves
// Redis unchanged.
func Rules(ctx context.Context, conn redis.Conn, keys schema.Keys, data []byte, opts Options) (Report, error) {
	raws, err := records(data, "notification_rules")
	if err != nil {
		return Report{}, err
	}
	var rep Report
	bad := map[int]bool{}
	firstUse := map[string]int{} // rule id -> record that uses it first
	valid := parseRecords(raws, parseRuleRecord, func(i int, r *ruleRecord) []Problem {
		if prev, dup := firstUse[r.rule.id]; dup {
			return []Problem{{Index: i, ID: r.rule.id, Field: "id", Reason: fmt.Sprintf("duplicate of record %d", prev)}}
		}
		firstUse[r.rule.id] = i
		return nil
	}, &rep, bad)
	problems, err := checkRuleOwners(ctx, conn, keys, valid)
	if err != nil {
		return Report{}, err
	}
	for _, p := range problems {
		rep.Problems = append(rep.Problems, p)
		bad[p.Index] = true
	}
	if err := outcome(&rep, len(raws), bad, opts); err != nil {
		return rep, err
	}
	ops := planRules(keys, valid, bad)
	for _, r := range valid {
		if !bad[r.index] {
			rep.Notes = append(rep.Notes, r.notes...)
		}
	}
	err = write(ctx, conn, "rules", ops, opts, &rep)
	return rep, err
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
	rec := &ruleRecord{index: index, contactID: contactID}
	// Time restrictions are read in the contact's zone by the notifier; their syntax, all that
	// is checked here, does not depend on it.
	r, ok := parseRule(c, "", contactID, index, raw, time.UTC, &rec.notes)
	if !ok {
		return nil, c.problems
	}
	rec.rule = r
	return rec, nil
}

// checkRuleOwners refuses rules of contacts that do not exist and rules whose id belongs to
// another contact.
func checkRuleOwners(ctx context.Context, conn redis.Conn, keys schema.Keys, recs []*ruleRecord) ([]Problem, error) {
	var b batch
	contactAt := make([]int, len(recs))
	ownerAt := make([]int, len(recs))
	for i, r := range recs {
		contactAt[i] = b.add("SISMEMBER", keys.AllContacts(), r.contactID)
		ownerAt[i] = b.add("HGET", keys.Rule(r.rule.id), "contact_id")
	}
	if err := b.run(ctx, conn); err != nil {
		return nil, err
	}
	var problems []Problem
	for i, r := range recs {
		if b.num(contactAt[i]) != 1 {
			problems = append(problems, Problem{Index: r.index, ID: r.rule.id, Field: "contact_id",
				Reason: fmt.Sprintf("contact %q does not exist (import contacts first)", r.contactID)})
		}
		if owner := b.str(ownerAt[i]); owner != "" && owner != r.contactID {
			problems = append(problems, Problem{Index: r.index, ID: r.rule.id, Field: "id",
				Reason: fmt.Sprintf("rule %q belongs to contact %q", r.rule.id, owner)})
		}
	}
	return problems, nil
}

// planRules replaces each good rule's hash and lists it for its contact.
func planRules(keys schema.Keys, recs []*ruleRecord, bad map[int]bool) model.Ops {
	var ops model.Ops
	for _, r := range recs {
		if bad[r.index] {
			continue
		}
		ops.Del(keys.Rule(r.rule.id))
		ops.HSet(keys.Rule(r.rule.id), r.rule.fields...)
		ops.SAdd(keys.ContactRules(r.contactID), r.rule.id)
	}
	return ops
}
