package roster

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/internal/strset"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// A contact exists when it has a contact:ID hash, as Flapjack 1.6 finds contacts (see
// addContactExists). Every writer here writes the hash with a first_name field, which is what
// 1.6 looks for, and keeps all_contacts, an index repaired from the hashes
// (RepairContactIndex).

// contactState is what Redis holds for some contacts, read under WATCH.
type contactState struct {
	exists    map[string]bool
	oldRules  map[string][]string // contact id -> members of contact_notification_rules:ID
	ruleOwner map[string]string   // rule id -> contact_id of notification_rule:ID
	oldTags   map[string][]string // contact id -> tags whose contact_tag:TAG holds it
	media     map[string][]string // contact id -> fields of contact_media:ID
	tagType   map[string]string   // tag (of those asked about) -> TYPE of contact_tag:TAG
}

// readContacts reads, under WATCH, the state a write of contacts ids replaces: membership of
// all_contacts, rule lists, the owners of those rules and of ruleIDs, media names, the types of
// the contact_tag sets of tags and, when withTags, the contact_tag sets holding each contact
// (found by SCAN: they have no per-contact index, as in Flapjack 1.x).
func (t *Txn) readContacts(ids, ruleIDs, tags []string, withTags bool) (*contactState, error) {
	keys := t.keys
	st := &contactState{exists: map[string]bool{}, oldRules: map[string][]string{}, ruleOwner: map[string]string{},
		oldTags: map[string][]string{}, media: map[string][]string{}, tagType: map[string]string{}}
	if len(ids) == 0 {
		return st, nil
	}
	watch := []string{keys.AllContacts()}
	for _, id := range ids {
		watch = append(watch, ownKeys(keys, id)...)
	}
	for _, rid := range ruleIDs {
		watch = append(watch, keys.Rule(rid))
	}
	for _, tag := range tags {
		watch = append(watch, keys.ContactTag(tag))
	}
	var b redisread.Batch
	t.Watch(&b, watch...)
	allType := b.Add("TYPE", keys.AllContacts())
	type reads struct {
		exists       contactAt
		rules, media int
	}
	at := make([]reads, len(ids))
	for i, id := range ids {
		at[i] = reads{
			exists: addContactExists(&b, keys, id),
			rules:  b.Add("SMEMBERS", keys.ContactRules(id)),
			media:  b.Add("HKEYS", keys.ContactMedia(id)),
		}
	}
	ownerAt := map[string]int{}
	for _, rid := range ruleIDs {
		ownerAt[rid] = b.Add("HGET", keys.Rule(rid), "contact_id")
	}
	tagAt := map[string]int{}
	for _, tag := range tags {
		if _, seen := tagAt[tag]; !seen {
			tagAt[tag] = b.Add("TYPE", keys.ContactTag(tag))
		}
	}
	if err := b.Run(t.ctx, t.conn); err != nil {
		return nil, err
	}
	if typ, ok := b.TypeOK(allType, "set"); !ok {
		return nil, fmt.Errorf("key %s holds a %s, not a set: fix or delete it; nothing written", keys.AllContacts(), typ)
	}
	for i, id := range ids {
		st.exists[id] = at[i].exists.exists(&b)
		st.oldRules[id] = b.Strs(at[i].rules)
		st.media[id] = b.Strs(at[i].media)
	}
	for rid, i := range ownerAt {
		st.ruleOwner[rid] = b.Str(i)
	}
	for tag, i := range tagAt {
		st.tagType[tag] = b.Str(i)
	}

	if withTags {
		tags, _, members, err := t.watchedMemberships(keys.ContactTag, ids)
		if err != nil {
			return nil, err
		}
		for i, tag := range tags {
			for id := range members[i] {
				st.oldTags[id] = append(st.oldTags[id], tag)
			}
		}
	}

	var b2 redisread.Batch
	var more []string
	for _, id := range ids {
		for _, rid := range st.oldRules[id] {
			if _, seen := ownerAt[rid]; !seen {
				ownerAt[rid] = -1
				more = append(more, rid)
			}
		}
	}
	if len(more) == 0 {
		return st, nil
	}
	watch = watch[:0]
	for _, rid := range more {
		watch = append(watch, keys.Rule(rid))
	}
	t.Watch(&b2, watch...)
	at2 := make([]int, len(more))
	for i, rid := range more {
		at2[i] = b2.Add("HGET", keys.Rule(rid), "contact_id")
	}
	if err := b2.Run(t.ctx, t.conn); err != nil {
		return nil, err
	}
	for i, rid := range more {
		st.ruleOwner[rid] = b2.Str(at2[i])
	}
	return st, nil
}

// ReplaceOptions shape the bulk writes ReplaceContacts and PutRules.
type ReplaceOptions struct {
	// Partial writes the items without problems; without it any problem writes nothing.
	Partial bool
	// DryRun reads and plans against the current state but writes nothing.
	DryRun bool
}

// Problem is why one item of a bulk write cannot be written.
type Problem struct {
	Index int // of the item in the slice given
	FieldError
}

// BulkResult is the outcome of ReplaceContacts or PutRules.
type BulkResult struct {
	Problems []Problem // in item order
	Refused  []bool    // by index: the item has a problem and was not written
	// Writes is the number of writes applied, or planned with DryRun; 0 when problems stopped
	// the write.
	Writes int
}

// checkItems validates items before any Redis read: each must pass validate and have an id
// (named noun in messages) no earlier item has. It returns the problems found and the valid
// items normalised (the zero value where refused).
func checkItems[T any](items []T, noun string, validate func(T) error, id func(T) string, normalize func(T) T) (BulkResult, []T) {
	res := BulkResult{Refused: make([]bool, len(items))}
	norm := make([]T, len(items))
	seen := map[string]int{}
	for i, it := range items {
		if err := validate(it); err != nil {
			for _, f := range err.(*ValidationError).Errors {
				res.refuse(i, f)
			}
			continue
		}
		if prev, dup := seen[id(it)]; dup {
			res.refuse(i, FieldError{Field: "id", Reason: fmt.Sprintf("duplicate of %s %d", noun, prev)})
			continue
		}
		seen[id(it)] = i
		norm[i] = normalize(it)
	}
	return res, norm
}

// refuse records a problem of item i.
func (r *BulkResult) refuse(i int, f FieldError) {
	r.Problems = append(r.Problems, Problem{Index: i, FieldError: f})
	r.Refused[i] = true
}

// sortProblems orders problems by item, keeping each item's in the order found.
func (r *BulkResult) sortProblems() {
	byItem := make([][]Problem, len(r.Refused))
	for _, p := range r.Problems {
		byItem[p.Index] = append(byItem[p.Index], p)
	}
	r.Problems = r.Problems[:0]
	for _, ps := range byItem {
		r.Problems = append(r.Problems, ps...)
	}
}

// replaceHow is what differs between the writers of whole contacts.
type replaceHow struct {
	opts       ReplaceOptions
	mustBeNew  bool // CreateContacts: an existing id is an *ExistsError
	ifAbsent   bool // SeedContact: an existing id is left alone
	everyCheck bool // SeedContact: also interested in every check (contacts_for:ALL)
}

// ReplaceContacts writes contacts, each replacing everything stored for its id (media,
// intervals, rollup thresholds, PagerDuty credentials, timezone, tags, rules): what the file
// no longer says is deleted, with the notifier's alerting set of a medium it no longer has
// (contact_alerting_checks). Other contacts are left alone, except that a rule id may move to
// a contact of contacts from another one of them. All of it is one atomic write, guarded
// against concurrent writers.
//
// A contact has a problem when it is not valid (ValidateContact), repeats an id or rule id of
// an earlier one, tags itself with a contact_tag key of another type than set, or takes a rule
// id of a contact not in contacts (Err ErrRuleTaken); problems are returned in the result, in
// contact order, and (unless opts.Partial) stop the whole write. An error is returned for
// Redis failures and for an all_contacts key of another type.
func ReplaceContacts(ctx context.Context, conn redis.Conn, keys schema.Keys, contacts []ContactData, opts ReplaceOptions) (BulkResult, error) {
	res, _, err := replaceContacts(ctx, conn, keys, contacts, replaceHow{opts: opts})
	return res, err
}

// CreateContacts writes new contacts (as ReplaceContacts) all or nothing: an invalid one is a
// *ValidationError (fields under contacts[i]), an id already in use an *ExistsError.
func CreateContacts(ctx context.Context, conn redis.Conn, keys schema.Keys, contacts []ContactData) error {
	res, _, err := replaceContacts(ctx, conn, keys, contacts, replaceHow{mustBeNew: true})
	if err != nil {
		return err
	}
	return bulkError("contacts", res)
}

// SeedContact creates c (see CreateContacts) unless a contact with its id exists, which it
// leaves alone; with everyCheck the new contact is also interested in every check
// (contacts_for:ALL). It reports whether it created the contact. For the server's demo mode:
//
//	SeedContact(ctx, conn, keys, ContactData{ID: "operator",
//		ContactInfo: ContactInfo{FirstName: "Operator", LastName: "(demo)"},
//		Media: []Medium{{Name: "log", Address: "stdout"}}}, true)
func SeedContact(ctx context.Context, conn redis.Conn, keys schema.Keys, c ContactData, everyCheck bool) (bool, error) {
	res, created, err := replaceContacts(ctx, conn, keys, []ContactData{c}, replaceHow{ifAbsent: true, everyCheck: everyCheck})
	if err != nil {
		return false, err
	}
	if err := bulkError("contacts", res); err != nil {
		return false, err
	}
	return created, nil
}

// bulkError turns the problems of a bulk write into a *ValidationError, fields under
// what[i].
func bulkError(what string, res BulkResult) error {
	if len(res.Problems) == 0 {
		return nil
	}
	v := &ValidationError{}
	for _, p := range res.Problems {
		f := p.FieldError
		f.Field = Index(what, p.Index) + "." + f.Field
		v.Errors = append(v.Errors, f)
	}
	return v
}

func replaceContacts(ctx context.Context, conn redis.Conn, keys schema.Keys, in []ContactData, how replaceHow) (BulkResult, bool, error) {
	contacts := make([]ContactData, len(in))
	static := BulkResult{Refused: make([]bool, len(in))}
	seen := map[string]int{}
	ruleAt := map[string]int{}
	for i, c := range in {
		if err := ValidateContact(c); err != nil {
			for _, f := range err.(*ValidationError).Errors {
				static.refuse(i, f)
			}
			continue
		}
		contacts[i] = c.normalized()
		if prev, dup := seen[c.ID]; dup {
			static.refuse(i, FieldError{Field: "id", Reason: fmt.Sprintf("duplicate of contact %d", prev)})
			continue
		}
		seen[c.ID] = i
		for k, r := range contacts[i].Rules {
			if prev, dup := ruleAt[r.ID]; dup && prev != i {
				static.refuse(i, FieldError{Field: Index("notification_rules", k) + ".id",
					Reason: fmt.Sprintf("rule id %q is also used by contact %d", r.ID, prev)})
				continue
			}
			ruleAt[r.ID] = i
		}
	}
	if how.mustBeNew && len(static.Problems) > 0 {
		return static, false, nil
	}

	var res BulkResult
	created := false
	err := Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		res = BulkResult{Refused: append([]bool(nil), static.Refused...), Problems: append([]Problem(nil), static.Problems...)}
		created = false
		var ids, ruleIDs, tags []string
		var candidates []int
		for i, c := range contacts {
			if res.Refused[i] {
				continue
			}
			candidates = append(candidates, i)
			ids = append(ids, c.ID)
			for _, r := range c.Rules {
				ruleIDs = append(ruleIDs, r.ID)
			}
			tags = append(tags, c.Tags...)
		}
		if len(candidates) == 0 {
			return nil, nil
		}
		st, err := t.readContacts(ids, ruleIDs, strset.Unique(tags), true)
		if err != nil {
			return nil, err
		}
		if how.mustBeNew {
			var taken []string
			for _, id := range ids {
				if st.exists[id] {
					taken = append(taken, id)
				}
			}
			if len(taken) > 0 {
				return nil, &ExistsError{What: "contact", IDs: taken}
			}
		}
		if how.ifAbsent && st.exists[ids[0]] {
			return nil, nil
		}
		for _, i := range candidates {
			for k, tag := range contacts[i].Tags {
				if typ := st.tagType[tag]; typ != "none" && typ != "set" {
					res.refuse(i, FieldError{Field: Index("tags", k),
						Reason: fmt.Sprintf("key %s holds a %s, not a set", keys.ContactTag(tag), typ)})
				}
			}
		}
		// A rule id that already belongs to another contact may only move if that contact is
		// rewritten too (its rule set is then replaced); otherwise the write would take the rule
		// away from it. Refusing one contact can refuse a move another relied on, so repeat until
		// nothing changes.
		for changed := true; changed; {
			changed = false
			for _, i := range candidates {
				if res.Refused[i] {
					continue
				}
				c := contacts[i]
				for k, r := range c.Rules {
					owner := st.ruleOwner[r.ID]
					if owner == "" || owner == c.ID {
						continue
					}
					if o, ok := seen[owner]; ok && !res.Refused[o] {
						continue
					}
					res.refuse(i, FieldError{Field: Index("notification_rules", k) + ".id",
						Reason: fmt.Sprintf("rule %q belongs to contact %q", r.ID, owner), Err: ErrRuleTaken})
					changed = true
				}
			}
		}
		res.sortProblems()
		if len(res.Problems) > 0 && !how.opts.Partial {
			return nil, nil
		}
		// Every deletion first, then every write, so contacts of one write never undo each other
		// (a rule or tag moving between them).
		var ops model.Ops
		for _, i := range candidates {
			if !res.Refused[i] {
				clearContact(&ops, keys, contacts[i].ID, st, strset.Of(contacts[i].Tags))
				forgetDroppedMedia(&ops, keys, contacts[i], st.media[contacts[i].ID])
			}
		}
		for _, i := range candidates {
			if !res.Refused[i] {
				writeContact(&ops, keys, contacts[i])
				if how.everyCheck {
					ops.SAdd(keys.ContactsFor(schema.AllContactsID), contacts[i].ID)
				}
			}
		}
		res.Writes = ops.Len()
		if how.opts.DryRun {
			return nil, nil
		}
		created = true
		return &ops, nil
	})
	if err != nil {
		return BulkResult{}, false, err
	}
	return res, created && !how.opts.DryRun, nil
}

// UpdateContacts changes the own fields (names, email, timezone) of existing contacts: change
// is called with each one's current fields (possibly more than once, if a concurrent writer
// forces a retry: it must only depend on its argument). All or nothing: a missing contact is a
// *NotFoundError, an invalid result a *ValidationError.
func UpdateContacts(ctx context.Context, conn redis.Conn, keys schema.Keys, ids []string, change func(*ContactInfo) error) error {
	ids = strset.Unique(ids)
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		var b redisread.Batch
		var watch []string
		for _, id := range ids {
			watch = append(watch, keys.Contact(id), keys.ContactTimezone(id))
		}
		t.Watch(&b, append(watch, keys.AllContacts())...)
		type reads struct {
			exists   contactAt
			info, tz int
		}
		at := make([]reads, len(ids))
		for i, id := range ids {
			at[i] = reads{
				exists: addContactExists(&b, keys, id),
				info:   b.Add("HMGET", keys.Contact(id), "first_name", "last_name", "email"),
				tz:     b.Add("GET", keys.ContactTimezone(id)),
			}
		}
		if err := b.Run(t.ctx, t.conn); err != nil {
			return nil, err
		}
		if err := Missing("contact", ids, func(i int) bool { return at[i].exists.exists(&b) }); err != nil {
			return nil, err
		}
		var ops model.Ops
		for i, id := range ids {
			f := b.Strs(at[i].info)
			for len(f) < 3 {
				f = append(f, "")
			}
			info := ContactInfo{FirstName: f[0], LastName: f[1], Email: f[2], Timezone: b.Str(at[i].tz)}
			if err := change(&info); err != nil {
				return nil, err
			}
			var k Checker
			k.Check("timezone", TimezoneProblem(info.Timezone))
			if err := k.Err(); err != nil {
				return nil, err
			}
			writeInfo(&ops, keys, id, info, false)
		}
		return &ops, nil
	})
}

// forgetDroppedMedia deletes the notifier's alerting sets (contact_alerting_checks) of the media
// a contact had (old) and its new version c does not: nothing would clean them any more.
func forgetDroppedMedia(ops *model.Ops, keys schema.Keys, c ContactData, old []string) {
	for _, m := range old {
		if !slices.ContainsFunc(c.Media, func(n Medium) bool { return n.Name == m }) {
			ops.Del(keys.AlertingChecks(c.ID, m))
		}
	}
}

// Missing returns a *NotFoundError naming the ids for which found is false.
func Missing(what string, ids []string, found func(i int) bool) error {
	var gone []string
	for i, id := range ids {
		if !found(i) {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		return &NotFoundError{What: what, IDs: gone}
	}
	return nil
}

// DeleteContacts deletes contacts with everything that is theirs, as Flapjack 1.x did: their
// keys, their rules, their memberships of contact_tag and contacts_for sets (both found by
// SCAN), and the notifier's state for them (contact_alert_state, and per medium
// contact_alerting_checks and drop_rollup_alerts_for_contact; per-check
// drop_alerts_for_contact keys expire on their own). All or nothing: a missing contact is a
// *NotFoundError.
func DeleteContacts(ctx context.Context, conn redis.Conn, keys schema.Keys, ids []string) error {
	ids = strset.Unique(ids)
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		st, err := t.readContacts(ids, nil, nil, true)
		if err != nil {
			return nil, err
		}
		if err := Missing("contact", ids, func(i int) bool { return st.exists[ids[i]] }); err != nil {
			return nil, err
		}
		_, setKeys, members, err := t.watchedMemberships(keys.ContactsFor, ids)
		if err != nil {
			return nil, err
		}
		var ops model.Ops
		for _, id := range ids {
			clearContact(&ops, keys, id, st, nil)
			for i, k := range setKeys {
				if members[i][id] {
					ops.SRem(k, id)
				}
			}
			ops.SRem(keys.AllContacts(), id)
			notifier := []any{keys.ContactAlertState(id), keys.DropAlerts(id)}
			for _, m := range st.media[id] {
				notifier = append(notifier, keys.AlertingChecks(id, m), keys.DropRollupAlerts(id, m), keys.DropAlerts(id, m))
			}
			ops.Del(notifier...)
		}
		return &ops, nil
	})
}

// SetMedia gives an existing contact media, each replacing the contact's medium of its name
// (address, interval, rollup threshold: one not set is removed). All or nothing: a missing
// contact is a *NotFoundError, an invalid medium a *ValidationError (fields under
// media.<name>).
func SetMedia(ctx context.Context, conn redis.Conn, keys schema.Keys, contactID string, media []Medium) error {
	var k Checker
	seen := map[string]bool{}
	for _, m := range media {
		if seen[m.Name] {
			k.Check("media."+m.Name, "given twice")
		}
		seen[m.Name] = true
		k.medium("media."+m.Name, m)
	}
	if err := k.Err(); err != nil {
		return err
	}
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		if err := t.MustExist(contactID); err != nil {
			return nil, err
		}
		var ops model.Ops
		writeMedia(&ops, keys, contactID, media, false)
		return &ops, nil
	})
}

// watchedMemberships finds every set of a family (family("") is its prefix), watches them all
// and says which of ids each holds: the names after the prefix, the set keys and, per set, its
// members among ids.
func (t *Txn) watchedMemberships(family func(string) string, ids []string) ([]string, []string, []map[string]bool, error) {
	names, err := redisread.ScanSets(t.ctx, t.conn, family(""))
	if err != nil {
		return nil, nil, nil, err
	}
	setKeys := make([]string, len(names))
	for i, name := range names {
		setKeys[i] = family(name)
	}
	if err := t.WatchNow(setKeys...); err != nil {
		return nil, nil, nil, err
	}
	_, members, err := redisread.Memberships(t.ctx, t.conn, setKeys, ids)
	if err != nil {
		return nil, nil, nil, err
	}
	return names, setKeys, members, nil
}

// MustExist WATCHes the contacts and all_contacts and returns a *NotFoundError when one does
// not exist.
func (t *Txn) MustExist(ids ...string) error {
	var b redisread.Batch
	watch := []string{t.keys.AllContacts()}
	for _, id := range ids {
		watch = append(watch, ownKeys(t.keys, id)...)
	}
	t.Watch(&b, watch...)
	at := make([]contactAt, len(ids))
	for i, id := range ids {
		at[i] = addContactExists(&b, t.keys, id)
	}
	if err := b.Run(t.ctx, t.conn); err != nil {
		return err
	}
	return Missing("contact", ids, func(i int) bool { return at[i].exists(&b) })
}

// readMedia reads, under WATCH, the media refs name; a contact or medium that does not exist is
// a *NotFoundError.
func (t *Txn) readMedia(refs []MediumRef) ([]Medium, error) {
	keys := t.keys
	var ids []string
	seen := map[string]bool{}
	for _, r := range refs {
		if !seen[r.ContactID] {
			seen[r.ContactID] = true
			ids = append(ids, r.ContactID)
		}
	}
	if err := t.MustExist(ids...); err != nil {
		return nil, err
	}
	var b redisread.Batch
	type reads struct{ address, interval, threshold int }
	at := make([]reads, len(refs))
	for i, r := range refs {
		at[i] = reads{
			address:   b.Add("HGET", keys.ContactMedia(r.ContactID), r.Name),
			interval:  b.Add("HGET", keys.ContactMediaIntervals(r.ContactID), r.Name),
			threshold: b.Add("HGET", keys.ContactRollupThresholds(r.ContactID), r.Name),
		}
	}
	if err := b.Run(t.ctx, t.conn); err != nil {
		return nil, err
	}
	out := make([]Medium, len(refs))
	var gone []string
	for i, r := range refs {
		reply, err := redis.String(b.Reply(at[i].address))
		if err != nil {
			gone = append(gone, r.String())
			continue
		}
		out[i] = Medium{Name: r.Name, Address: reply,
			Interval: optInt(b.Str(at[i].interval)), RollupThreshold: optInt(b.Str(at[i].threshold))}
	}
	if len(gone) > 0 {
		return nil, &NotFoundError{What: "medium", IDs: gone}
	}
	return out, nil
}

// UpdateMedia changes existing media of existing contacts: change is called with each one's
// current settings (possibly more than once, as for UpdateContacts; a change of Name is
// ignored). All or nothing: a missing contact or medium is a *NotFoundError, an invalid result a
// *ValidationError.
func UpdateMedia(ctx context.Context, conn redis.Conn, keys schema.Keys, refs []MediumRef, change func(*Medium) error) error {
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		media, err := t.readMedia(refs)
		if err != nil {
			return nil, err
		}
		var ops model.Ops
		for i, r := range refs {
			m := media[i]
			if err := change(&m); err != nil {
				return nil, err
			}
			m.Name = r.Name
			if err := ValidateMedium(m); err != nil {
				return nil, err
			}
			writeMedia(&ops, keys, r.ContactID, []Medium{m}, false)
		}
		return &ops, nil
	})
}

// DeleteMedia removes media of contacts (address, interval, rollup threshold; for pagerduty
// also the PagerDuty credentials, as Flapjack 1.x did), and the notifier's alerting set of the
// medium (contact_alerting_checks), which nothing would clean any more. All or nothing: a
// missing contact or medium is a *NotFoundError.
func DeleteMedia(ctx context.Context, conn redis.Conn, keys schema.Keys, refs []MediumRef) error {
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		if _, err := t.readMedia(refs); err != nil {
			return nil, err
		}
		var ops model.Ops
		for _, r := range refs {
			ops.Del(keys.AlertingChecks(r.ContactID, r.Name))
			ops.HDel(keys.ContactMedia(r.ContactID), r.Name)
			ops.HDel(keys.ContactMediaIntervals(r.ContactID), r.Name)
			ops.HDel(keys.ContactRollupThresholds(r.ContactID), r.Name)
			if r.Name == PagerdutyMedium {
				ops.Del(keys.ContactPagerduty(r.ContactID))
			}
		}
		return &ops, nil
	})
}

// UpdatePagerduty sets the PagerDuty settings of existing contacts: change is called with each
// one's current settings (zero when it has none; possibly more than once, as for
// UpdateContacts) and the result replaces them: the service key becomes the pagerduty medium's
// address (its interval is kept), the credentials replace contact_pagerduty:ID. All or nothing:
// a missing contact is a *NotFoundError, an empty service key a *ValidationError. DeleteMedia
// of the pagerduty medium removes both.
func UpdatePagerduty(ctx context.Context, conn redis.Conn, keys schema.Keys, contactIDs []string, change func(*PagerdutySettings) error) error {
	contactIDs = strset.Unique(contactIDs)
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		if err := t.MustExist(contactIDs...); err != nil {
			return nil, err
		}
		var b redisread.Batch
		type reads struct{ key, creds int }
		at := make([]reads, len(contactIDs))
		for i, id := range contactIDs {
			at[i] = reads{key: b.Add("HGET", keys.ContactMedia(id), PagerdutyMedium), creds: b.Add("HGETALL", keys.ContactPagerduty(id))}
		}
		if err := b.Run(t.ctx, t.conn); err != nil {
			return nil, err
		}
		var ops model.Ops
		for i, id := range contactIDs {
			m, _ := redis.StringMap(b.Reply(at[i].creds))
			p := PagerdutySettings{ServiceKey: b.Str(at[i].key), PagerdutyCredentials: PagerdutyCredentials{
				Subdomain: m["subdomain"], Token: m["token"], Username: m["username"], Password: m["password"]}}
			if err := change(&p); err != nil {
				return nil, err
			}
			var k Checker
			k.Check("service_key", AddressProblem(p.ServiceKey))
			if err := k.Err(); err != nil {
				return nil, err
			}
			ops.HSet(keys.ContactMedia(id), PagerdutyMedium, p.ServiceKey)
			writeCredentials(&ops, keys, id, p.PagerdutyCredentials, false)
		}
		return &ops, nil
	})
}

// CreateRules adds new notification rules to an existing contact and returns their ids (a
// rule without one gets a random UUID). All or nothing: an invalid rule is a *ValidationError
// (fields under notification_rules[i]), a missing contact a *NotFoundError, a rule id in use an
// *ExistsError.
func CreateRules(ctx context.Context, conn redis.Conn, keys schema.Keys, contactID string, rules []Rule) ([]string, error) {
	rules = append([]Rule(nil), rules...)
	res := BulkResult{Refused: make([]bool, len(rules))}
	seen := map[string]int{}
	for i := range rules {
		if rules[i].ID == "" {
			rules[i].ID = randomID()
		}
		rules[i].ContactID = contactID
		if err := ValidateRule(rules[i]); err != nil {
			for _, f := range err.(*ValidationError).Errors {
				res.refuse(i, f)
			}
		}
		if prev, dup := seen[rules[i].ID]; dup {
			res.refuse(i, FieldError{Field: "id", Reason: fmt.Sprintf("duplicate of notification_rules[%d]", prev)})
		}
		seen[rules[i].ID] = i
		rules[i] = rules[i].normalized()
	}
	res.sortProblems()
	if err := bulkError("notification_rules", res); err != nil {
		return nil, err
	}
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = r.ID
	}
	err := Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		if err := t.MustExist(contactID); err != nil {
			return nil, err
		}
		var b redisread.Batch
		watch := make([]string, len(rules))
		for i, r := range rules {
			watch[i] = keys.Rule(r.ID)
		}
		t.Watch(&b, watch...)
		at := make([]int, len(rules))
		for i, r := range rules {
			at[i] = b.Add("EXISTS", keys.Rule(r.ID))
		}
		if err := b.Run(t.ctx, t.conn); err != nil {
			return nil, err
		}
		var taken []string
		for i, r := range rules {
			if b.Num(at[i]) > 0 {
				taken = append(taken, r.ID)
			}
		}
		if len(taken) > 0 {
			return nil, &ExistsError{What: "notification rule", IDs: taken}
		}
		var ops model.Ops
		for _, r := range rules {
			writeRule(&ops, keys, r)
			ops.SAdd(keys.ContactRules(contactID), r.ID)
		}
		return &ops, nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// PutRules writes notification rules of existing contacts (what `flapjack import rules` does):
// each replaces the rule of its id, or is added to its contact's rules; the contacts' other
// rules are left alone. A rule has a problem when it is not valid (ValidateRule), repeats an
// earlier id, names a contact that does not exist (Err ErrNotFound) or has the id of another
// contact's rule (Err ErrRuleTaken); problems are returned in the result and, unless
// opts.Partial, stop the whole write. One atomic write, guarded against concurrent writers.
func PutRules(ctx context.Context, conn redis.Conn, keys schema.Keys, rules []Rule, opts ReplaceOptions) (BulkResult, error) {
	static, norm := checkItems(rules, "rule", ValidateRule, func(r Rule) string { return r.ID }, Rule.normalized)
	var res BulkResult
	err := Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		res = BulkResult{Refused: append([]bool(nil), static.Refused...), Problems: append([]Problem(nil), static.Problems...)}
		var b redisread.Batch
		watch := []string{keys.AllContacts()}
		for i, r := range norm {
			if !res.Refused[i] {
				watch = append(watch, keys.Rule(r.ID), keys.ContactRules(r.ContactID), keys.Contact(r.ContactID))
			}
		}
		t.Watch(&b, watch...)
		type reads struct {
			contact contactAt
			owner   int
		}
		at := make([]reads, len(norm))
		for i, r := range norm {
			if !res.Refused[i] {
				at[i] = reads{contact: addContactExists(&b, keys, r.ContactID), owner: b.Add("HGET", keys.Rule(r.ID), "contact_id")}
			}
		}
		if err := b.Run(t.ctx, t.conn); err != nil {
			return nil, err
		}
		for i, r := range norm {
			if res.Refused[i] {
				continue
			}
			if !at[i].contact.exists(&b) {
				res.refuse(i, FieldError{Field: "contact_id", Reason: fmt.Sprintf("contact %q does not exist", r.ContactID), Err: ErrNotFound})
			}
			if owner := b.Str(at[i].owner); owner != "" && owner != r.ContactID {
				res.refuse(i, FieldError{Field: "id", Reason: fmt.Sprintf("rule %q belongs to contact %q", r.ID, owner), Err: ErrRuleTaken})
			}
		}
		res.sortProblems()
		if len(res.Problems) > 0 && !opts.Partial {
			return nil, nil
		}
		var ops model.Ops
		for i, r := range norm {
			if !res.Refused[i] {
				writeRule(&ops, keys, r)
				ops.SAdd(keys.ContactRules(r.ContactID), r.ID)
			}
		}
		res.Writes = ops.Len()
		if opts.DryRun {
			return nil, nil
		}
		return &ops, nil
	})
	if err != nil {
		return BulkResult{}, err
	}
	return res, nil
}

// UpdateRules changes existing notification rules: change is called with each one as stored
// (possibly more than once, as for UpdateContacts; changes of ID and ContactID are ignored) and
// the result replaces it. All or nothing: a missing rule is a *NotFoundError, an invalid
// result a *ValidationError.
func UpdateRules(ctx context.Context, conn redis.Conn, keys schema.Keys, ids []string, change func(*Rule) error) error {
	ids = strset.Unique(ids)
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		rules, err := t.readDecodedRules(ids)
		if err != nil {
			return nil, err
		}
		var ops model.Ops
		for i, id := range ids {
			r := rules[i]
			owner := r.ContactID
			if err := change(&r); err != nil {
				return nil, err
			}
			r.ID, r.ContactID = id, owner
			if err := ValidateRule(r); err != nil {
				return nil, err
			}
			writeRule(&ops, keys, r.normalized())
		}
		return &ops, nil
	})
}

// readRules reads, under WATCH, the hashes of rules ids; a missing one is a *NotFoundError.
func (t *Txn) readRules(ids []string) ([]map[string]string, error) {
	var b redisread.Batch
	watch := make([]string, len(ids))
	for i, id := range ids {
		watch[i] = t.keys.Rule(id)
	}
	t.Watch(&b, watch...)
	at := make([]int, len(ids))
	for i, id := range ids {
		at[i] = b.Add("HGETALL", t.keys.Rule(id))
	}
	if err := b.Run(t.ctx, t.conn); err != nil {
		return nil, err
	}
	out := make([]map[string]string, len(ids))
	for i := range ids {
		out[i], _ = redis.StringMap(b.Reply(at[i]))
	}
	if err := Missing("notification rule", ids, func(i int) bool { return len(out[i]) > 0 }); err != nil {
		return nil, err
	}
	return out, nil
}

// readDecodedRules is readRules, decoded.
func (t *Txn) readDecodedRules(ids []string) ([]Rule, error) {
	stored, err := t.readRules(ids)
	if err != nil {
		return nil, err
	}
	rules := make([]Rule, len(ids))
	for i, id := range ids {
		if rules[i], err = DecodeRule(id, stored[i]); err != nil {
			return nil, err
		}
	}
	return rules, nil
}

// DeleteRules deletes notification rules and takes them off their contacts' lists. All or
// nothing: a missing rule is a *NotFoundError.
func DeleteRules(ctx context.Context, conn redis.Conn, keys schema.Keys, ids []string) error {
	ids = strset.Unique(ids)
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		stored, err := t.readRules(ids)
		if err != nil {
			return nil, err
		}
		var ops model.Ops
		for i, id := range ids {
			ops.Del(keys.Rule(id))
			if owner := stored[i]["contact_id"]; owner != "" {
				ops.SRem(keys.ContactRules(owner), id)
			}
		}
		return &ops, nil
	})
}

// MoveRules gives the notification rules ids to contact contactID, as Flapjack 1.6's JSON API
// does for a contact's notification_rules link: each leaves its owner's list for contactID's.
// All or nothing: a missing contact or rule is a *NotFoundError.
func MoveRules(ctx context.Context, conn redis.Conn, keys schema.Keys, contactID string, ids []string) error {
	ids = strset.Unique(ids)
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		if err := t.MustExist(contactID); err != nil {
			return nil, err
		}
		rules, err := t.readDecodedRules(ids)
		if err != nil {
			return nil, err
		}
		var ops model.Ops
		for _, r := range rules {
			id := r.ID
			if r.ContactID != "" && r.ContactID != contactID {
				ops.SRem(keys.ContactRules(r.ContactID), id)
			}
			r.ContactID = contactID
			writeRule(&ops, keys, r.normalized())
			ops.SAdd(keys.ContactRules(contactID), id)
		}
		return &ops, nil
	})
}

// randomID is a random (version 4) UUID.
func randomID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = (u[6] & 0x0f) | 0x40
	u[8] = (u[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// optInt is a stored integer, nil when there is none.
func optInt(s string) *int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

var (
	//go:embed scripts/repair_contact_index.lua
	repairContactIndexSource string
	repairContactIndexScript = redis.NewScript(0, repairContactIndexSource)
)

// RepairContactIndex brings all_contacts, our index of contacts, in line with the contact:ID
// hashes, which decide (see addContactExists): a contact Flapjack 1.6 wrote joins the index; a
// member without a hash that still has data of its own (written by an earlier version of ours
// when its own fields were all empty) gets the hash, with an empty first_name, so it is found
// again, by 1.6 too; a member with nothing left (deleted by 1.6, which does not know the index)
// leaves it. It returns how many contacts it changed.
func RepairContactIndex(ctx context.Context, conn redis.Conn, keys schema.Keys) (int, error) {
	hashes, err := redisread.Scan(ctx, conn, keys.Contact(""), "hash")
	if err != nil {
		return 0, fmt.Errorf("repair all_contacts: %w", err)
	}
	indexed, err := redis.Strings(conn.Do("SMEMBERS", keys.AllContacts()))
	if err != nil {
		return 0, fmt.Errorf("repair all_contacts: %w", err)
	}
	inIndex := make(map[string]bool, len(indexed))
	for _, id := range indexed {
		inIndex[id] = true
	}
	own := len(ownKeys(keys, ""))
	args := []any{keys.AllContacts(), own}
	add := func(id string) {
		args = append(args, id)
		for _, k := range ownKeys(keys, id) {
			args = append(args, k)
		}
	}
	for _, id := range hashes {
		if !inIndex[id] {
			add(id)
		}
		delete(inIndex, id)
	}
	for id := range inIndex {
		add(id)
	}
	if len(args) == 2 {
		return 0, nil
	}
	n, err := redis.Int(repairContactIndexScript.DoContext(ctx, conn, args...))
	if err != nil {
		return 0, fmt.Errorf("repair all_contacts: %w", err)
	}
	return n, nil
}
