package importer

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/roster"
)

const scheduleContactsFile = `[{"id": "ada", "media": {"email": "ada@example.com"}},
 {"id": "bob", "media": {"email": "bob@example.com"}},
 {"id": "lead", "media": {"email": "lead@example.com"}}]`

const webPrimary = `{"id": "web-primary", "name": "Web primary", "timezone": "Europe/London",
  "layers": [{"name": "weekly", "start": "2026-03-23T09:00:00", "turn": "1 week", "members": ["ada", "bob"]}],
  "fallback": ["lead"]}`

func TestImportSchedules(t *testing.T) {
	e := newEnv(t, "")
	e.mustImport(Contacts, []byte(scheduleContactsFile))
	tests := []struct {
		name     string
		file     string
		opts     Options
		problems []string // substrings, in order
		stored   []string // schedule ids stored after the import
	}{
		{name: "unknown contact", file: `[` + webPrimary + `, {"id": "db", "timezone": "UTC", "fallback": ["zed"]}]`,
			problems: []string{`record 1 (id "db"): fallback[0]: contact "zed" does not exist (import contacts first)`}},
		{name: "unknown field", file: `[{"id": "x", "timezone": "UTC", "fallback": ["ada"], "colour": 1}]`,
			problems: []string{`record 0 (id "x"): colour: unknown field`}},
		{name: "bad zone", file: `[{"id": "x", "timezone": "Mars/Base", "fallback": ["ada"]}]`,
			problems: []string{`record 0 (id "x"): timezone`}},
		{name: "duplicate id", file: `[` + webPrimary + `,` + webPrimary + `]`,
			problems: []string{`record 1 (id "web-primary"): id: duplicate of record 0`}},
		{name: "dry run writes nothing", file: `[` + webPrimary + `]`, opts: Options{DryRun: true}},
		{name: "partial keeps the good one", file: `[` + webPrimary + `, {"id": "db", "timezone": "UTC", "fallback": ["zed"]}]`,
			opts: Options{Partial: true}, problems: []string{`fallback[0]: contact "zed" does not exist`}, stored: []string{"web-primary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := e.run(Schedules, []byte(tt.file), tt.opts)
			if len(tt.problems) > 0 && !tt.opts.Partial && !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if len(rep.Problems) != len(tt.problems) {
				t.Fatalf("problems %v, want %d", rep.Problems, len(tt.problems))
			}
			for i, want := range tt.problems {
				if got := rep.Problems[i].String(); !strings.Contains(got, want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got, want)
				}
			}
			conn := e.db.Conn(t)
			defer conn.Close()
			ids, err := redis.Strings(conn.Do("HKEYS", e.keys.Schedules()))
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tt.stored) && !(len(ids) == 0 && len(tt.stored) == 0) {
				t.Fatalf("stored %v, want %v", ids, tt.stored)
			}
		})
	}
	conn := e.db.Conn(t)
	defer conn.Close()
	got, problems, err := roster.Schedules(conn, e.keys)
	if err != nil || len(problems) > 0 || len(got) != 1 {
		t.Fatalf("read back: %v %v %v", got, problems, err)
	}
	if got[0].Title() != "Web primary" || got[0].Location().String() != "Europe/London" || len(got[0].Layers[0].Members) != 2 {
		t.Fatalf("read back %+v", got[0])
	}
}

func TestImportEntityAndStepSchedules(t *testing.T) {
	e := newEnv(t, "")
	e.mustImport(Contacts, []byte(scheduleContactsFile))
	e.mustImport(Schedules, []byte(`[`+webPrimary+`]`))

	rep, err := e.run(Entities, []byte(`[{"id": "1", "name": "web-01", "schedules": ["web-primary", "nope"]}]`), Options{})
	if !errors.Is(err, ErrInvalid) || len(rep.Problems) != 1 ||
		rep.Problems[0].String() != `record 0 (id "1"): schedules[1]: unknown schedule "nope" (import schedules first)` {
		t.Fatalf("unknown schedule: %v %v", err, rep.Problems)
	}
	e.mustImport(Entities, []byte(`[{"id": "1", "name": "web-01", "contacts": ["ada"], "schedules": ["web-primary"]}]`))
	conn := e.db.Conn(t)
	defer conn.Close()
	got, err := roster.EntitySchedules(conn, e.keys, []string{"1"})
	if err != nil || !slices.Equal(got["1"], []string{"web-primary"}) {
		t.Fatalf("entity schedules %v %v", got, err)
	}
	// a record describes its entity completely: without schedules it routes to none
	e.mustImport(Entities, []byte(`[{"id": "1", "name": "web-01", "contacts": ["ada"]}]`))
	if got, _ := roster.EntitySchedules(conn, e.keys, []string{"1"}); len(got["1"]) != 0 {
		t.Fatalf("schedules kept after re-import without them: %v", got)
	}

	rep, err = e.run(Escalations, []byte(`[{"id": "p", "steps": [{"delay": "0 minutes", "schedules": ["web-primary"]},
	  {"delay": "10 minutes", "schedules": ["ghost"]}, {"delay": "20 minutes"}]}]`), Options{})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err %v", err)
	}
	var msgs []string
	for _, p := range rep.Problems {
		msgs = append(msgs, p.String())
	}
	want := []string{`record 0 (id "p"): steps[2].contacts: needs at least one contact or schedule`}
	if !slices.Equal(msgs, want) {
		t.Fatalf("problems %q, want %q", msgs, want)
	}
	rep, err = e.run(Escalations, []byte(`[{"id": "p", "steps": [{"delay": "0 minutes", "schedules": ["web-primary"]},
	  {"delay": "10 minutes", "schedules": ["ghost"]}]}]`), Options{})
	if !errors.Is(err, ErrInvalid) || len(rep.Problems) != 1 ||
		rep.Problems[0].String() != `record 0 (id "p"): steps[1].schedules[0]: schedule "ghost" does not exist (import schedules first)` {
		t.Fatalf("unknown step schedule: %v %v", err, rep.Problems)
	}
	e.mustImport(Escalations, []byte(`[{"id": "p", "steps": [{"delay": "0 minutes", "schedules": ["web-primary"]}]}]`))
}
