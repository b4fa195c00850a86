// Package importer loads Flapjack 1.x import files (`flapjack import contacts|entities|rules -f
// FILE`) into Flapjack 1.x's Redis layout (docs/flapjack-1x.md 3.9: contacts, the contacts of
// entities and checks, notification rules), so that roster.LoadContacts and roster.ContactIDsFor
// read back exactly what the file says.
//
// # Files
//
// A file is a JSON array of records, or an object wrapping that array the way Flapjack's JSON
// API does: {"contacts": [...]}, {"entities": [...]} or {"notification_rules": [...]} (a
// top-level "links" or "meta" member is ignored). Every field of a record is checked; a field this package does not know is a problem
// (typo protection), except the 1.x API fields "links" and "type", which are accepted and
// ignored. null counts as absent. Ids may be strings or integers (21 is stored as "21").
//
// Contact record:
//
//	id                  required
//	first_name, last_name, email   strings (empty ones are not stored)
//	timezone            an IANA zone name, e.g. "Europe/London"
//	tags                array of strings (contact_tag:TAG sets)
//	media               object: medium -> address string, or
//	                    {"address": "...", "interval": SECONDS, "rollup_threshold": N};
//	                    pagerduty -> service key string, or {"service_key": "...", "subdomain",
//	                    "token", "username", "password", "interval"} (never rolled up)
//	notification_rules  array of rules:
//	  id                optional; by default a name-based UUID of the contact id and the rule's
//	                    position, so re-importing the same file gives the same ids
//	  entities          entity names (lower-cased, docs/decisions.md D14)
//	  regex_entities, regex_tags   Go RE2 patterns; one that does not compile is a problem
//	  tags              (alias entity_tags) tags every one of which the event must carry
//	  time_restrictions array of objects with start_time and end_time (or start_date/end_date):
//	                    ice_cube hashes or RFC 5545 "rrule" strings (docs/decisions.md D9), stored verbatim
//	  unknown_media, warning_media, critical_media   arrays of medium names
//	  unknown_blackhole, warning_blackhole, critical_blackhole   booleans
//	  contact_id        optional; must be the contact's own id
//
// Rule record (rules files): the fields of a contact's notification_rules entry, with id and
// contact_id required; see Rules.
//
// Entity record: id (required; not "ALL", no ':'), name (required; trimmed and lower-cased, no
// ':'), contacts (array of contact ids: contacts_for:ID), schedules (array of on-call schedule
// ids, each stored already: entity_schedules:ID), tags (array: entity_tag:TAG and
// known_tags:entity_tag).
//
// # What an import writes
//
// Each record describes its contact or entity completely: importing it replaces what Redis held
// for that id (media, intervals, rollup thresholds, PagerDuty credentials, timezone, tags, rules;
// an entity's name, contacts and tags), deleting what the file no longer lists. Contacts and
// entities absent from the file are left alone. Re-importing the same file leaves Redis
// unchanged. One file is written atomically (one apply script): all of it or, if any record has
// a problem, none of it, unless Options.Partial asks for the valid records to be written anyway.
// The current state is read first (old rules, tag memberships, entity names) to know what to
// delete; contact_tag sets have no per-contact index, so they are found with SCAN. Needs Redis
// 6.2 or later (SMISMEMBER, SCAN ... TYPE).
//
// This package reads files and reports on them. What a valid contact, medium or rule is, and
// how one is written, belong to package model/roster (ReplaceContacts, PutRules), which the JSON API
// uses too; their writes are guarded against concurrent writers (see roster.ReplaceContacts).
package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/jsonfield"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
)

// Options change how a file is imported.
type Options struct {
	// Partial writes the valid records and skips the bad ones. Without it a file with any bad
	// record writes nothing.
	Partial bool
	// DryRun validates the file and plans the writes against the current Redis state, but writes
	// nothing.
	DryRun bool
}

// Report is the outcome of one import.
type Report struct {
	// Imported is the number of records written (or, with DryRun, that would be written).
	Imported int
	// Skipped is the number of records not written.
	Skipped int
	// Problems lists every reason a record was refused, in record order.
	Problems []Problem
	// Notes are things worth telling the operator that did not stop a record: an entity renamed
	// or taking over a name another id had, a contact listed for an entity that is not known, a
	// rule naming a medium the contact has no address for, a time restriction the notifier will
	// not be able to read.
	Notes []string
	// Writes is the number of Redis writes applied (or planned, with DryRun).
	Writes int
}

// Problem is one reason a record cannot be imported.
type Problem struct {
	Index  int    // position of the record in the file's array, from 0 (jq's .[Index])
	ID     string // the record's id, "" when it has none
	Field  string // path of the field, e.g. "media.sms" or "notification_rules[1].regex_tags[0]"
	Reason string
}

// String renders the problem as `record 3 (id "ada"): media.sms: must be a string`.
func (p Problem) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "record %d", p.Index)
	if p.ID != "" {
		fmt.Fprintf(&b, " (id %q)", p.ID)
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Reason)
	return b.String()
}

// ErrInvalid is wrapped by the error returned for a file that is not valid: malformed JSON, the
// wrong top-level shape, or (without Options.Partial) any record with a problem. Nothing has been
// written then. Other errors come from Redis.
var ErrInvalid = errors.New("invalid import file")

// records splits a file into its records: a top-level array, or {"<wrapper>": [...]}.
func records(data []byte, wrapper string) ([]json.RawMessage, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: the file is not valid UTF-8", ErrInvalid)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrInvalid)
	}
	switch trimmed[0] {
	case '[':
		var out []json.RawMessage
		if err := json.Unmarshal(trimmed, &out); err != nil {
			return nil, syntaxError(data, err)
		}
		return out, nil
	case '{':
		var top map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &top); err != nil {
			return nil, syntaxError(data, err)
		}
		var unknown []string
		for k := range top {
			if k != wrapper && k != "links" && k != "meta" {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return nil, fmt.Errorf("%w: unknown top-level field %q (expected an array, or {%q: [...]})",
				ErrInvalid, unknown[0], wrapper)
		}
		raw, ok := top[wrapper]
		if !ok || jsonfield.IsNull(raw) {
			return nil, fmt.Errorf("%w: no %q array in the top-level object", ErrInvalid, wrapper)
		}
		var out []json.RawMessage
		if jsonfield.First(raw) != '[' || json.Unmarshal(raw, &out) != nil {
			return nil, fmt.Errorf("%w: %q must be an array", ErrInvalid, wrapper)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w: expected a JSON array of %s (or {%q: [...]})", ErrInvalid, wrapper, wrapper)
	}
}

// syntaxError names the line and column of a JSON syntax error.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(data, se.Offset)
		return fmt.Errorf("%w: line %d, column %d: %v", ErrInvalid, line, col, se)
	}
	return fmt.Errorf("%w: %v", ErrInvalid, err)
}

func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	if col == 0 {
		col = 1
	}
	return line, col
}

// parseRecords parses each record of a file. crossCheck gives the problems a well-formed record
// has with the records before it (a duplicate id). Records with problems go to rep and bad; the
// others are returned in file order.
func parseRecords[T any](raws []json.RawMessage, parse func(int, json.RawMessage) (T, []Problem),
	crossCheck func(int, T) []Problem, rep *Report, bad map[int]bool) []T {
	var valid []T
	for i, raw := range raws {
		rec, problems := parse(i, raw)
		if len(problems) == 0 {
			problems = crossCheck(i, rec)
		}
		if len(problems) > 0 {
			rep.Problems = append(rep.Problems, problems...)
			bad[i] = true
			continue
		}
		valid = append(valid, rec)
	}
	return valid
}

// keyed is a well-formed record of a file whose records each write one item named by its id
// (notification rules, escalation policies).
type keyed[V any] struct {
	index int
	id    string
	value V
}

// importKeyed imports such a file: the records parsed, their ids unique in the file, the valid
// ones written by put in one call (nothing when a record has a problem, unless Partial), and each
// problem put finds traced back to its record. It returns the records written.
func importKeyed[V any](raws []json.RawMessage, parse func(int, json.RawMessage) (*keyed[V], []Problem),
	put func([]V, roster.ReplaceOptions) (roster.BulkResult, error), opts Options) (Report, []*keyed[V], error) {
	var rep Report
	bad := map[int]bool{}
	firstUse := map[string]int{}
	valid := parseRecords(raws, parse, func(i int, r *keyed[V]) []Problem {
		if prev, dup := firstUse[r.id]; dup {
			return []Problem{{Index: i, ID: r.id, Field: "id", Reason: fmt.Sprintf("duplicate of record %d", prev)}}
		}
		firstUse[r.id] = i
		return nil
	}, &rep, bad)
	values := make([]V, len(valid))
	for i, r := range valid {
		values[i] = r.value
	}
	res, err := put(values, roster.ReplaceOptions{Partial: opts.Partial, DryRun: opts.DryRun || (len(bad) > 0 && !opts.Partial)})
	if err != nil {
		return Report{}, nil, err
	}
	for _, p := range res.Problems {
		r := valid[p.Index]
		reason := p.Reason
		if errors.Is(p.Err, roster.ErrNotFound) {
			reason += " (import " + missingKind(p.Field) + " first)"
		}
		rep.Problems = append(rep.Problems, Problem{Index: r.index, ID: r.id, Field: p.Field, Reason: reason})
		bad[r.index] = true
	}
	if err := outcome(&rep, len(raws), bad, opts); err != nil {
		return rep, nil, err
	}
	rep.Writes = res.Writes
	var written []*keyed[V]
	for _, r := range valid {
		if !bad[r.index] {
			written = append(written, r)
		}
	}
	return rep, written, nil
}

// missingKind is what to import first when the item at field names something that does not
// exist: a schedule of an escalation step, else a contact.
func missingKind(field string) string {
	if strings.Contains(field, ".schedules[") {
		return "schedules"
	}
	return "contacts"
}

// outcome turns the problems of a file into the report's counts and the returned error.
func outcome(rep *Report, total int, bad map[int]bool, opts Options) error {
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].Index < rep.Problems[j].Index })
	if len(bad) > 0 && !opts.Partial {
		rep.Imported, rep.Skipped = 0, total
		noun := "records have"
		if len(bad) == 1 {
			noun = "record has"
		}
		return fmt.Errorf("%w: %d of %d %s problems; nothing written", ErrInvalid, len(bad), total, noun)
	}
	rep.Imported, rep.Skipped = total-len(bad), len(bad)
	return nil
}

// write records the planned writes in the report and, unless it is a dry run, applies them.
func write(ctx context.Context, conn redis.Conn, what string, ops model.Ops, opts Options, rep *Report) error {
	rep.Writes = ops.Len()
	if opts.DryRun {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := apply(conn, ops); err != nil {
		return fmt.Errorf("import %s: %w", what, err)
	}
	return nil
}

// apply writes the planned ops in one atomic script (no item, no guard, no counter).
func apply(conn redis.Conn, ops model.Ops) error {
	if ops.Len() == 0 {
		return nil
	}
	statuses, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{{Ops: ops}})
	var werr *model.WriteError
	if errors.As(err, &werr) {
		// A key changed type between our checks and the script (another tool wrote it).
		return fmt.Errorf("import partly applied: %w", err)
	}
	if err != nil {
		return err
	}
	if len(statuses) != 1 || statuses[0] != model.Applied {
		return fmt.Errorf("import not applied (status %v)", statuses)
	}
	return nil
}
