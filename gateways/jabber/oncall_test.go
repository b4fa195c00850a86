package jabber

import (
	"context"
	"testing"
)

// TestBotOnCall: `oncall` names who each schedule has on call at the bot's clock (t0, Monday 5
// January 10:00 UTC), why, until when and who is next; `oncall ID` one schedule; an unknown id
// lists the schedules.
func TestBotOnCall(t *testing.T) {
	t.Parallel()
	b, db, keys := newTestBot(t)
	ctx := context.Background()
	if got := b.execute(ctx, ParseCommand("oncall"), "ada"); got != "there are no on-call schedules" {
		t.Errorf("no schedules: %q", got)
	}
	db.Do(t, "HSET", keys.Schedules(), "ops", `{"id": "ops", "name": "Ops primary", "timezone": "Europe/London",
	  "layers": [{"name": "weekly", "start": "2026-01-05T09:00:00", "turn": "1 week", "members": ["ada", "bob"],
	  "restrictions": [{"days": "mon-fri", "from": "09:00", "to": "17:00"}]}]}`)
	db.Do(t, "HSET", keys.Schedules(), "db", `{"id": "db", "timezone": "UTC", "fallback": ["carol"]}`)
	tests := []struct{ text, want string }{
		{"oncall", "db (db): carol on call (fallback: nobody else is on call)\n" +
			`ops (Ops primary): ada on call (layer "weekly") until Mon 5 Jan 17:00 GMT, then nobody`},
		{"oncall ops", `ops (Ops primary): ada on call (layer "weekly") until Mon 5 Jan 17:00 GMT, then nobody`},
		{"oncall nope", "no schedule 'nope' (schedules: db, ops)"},
	}
	for _, tt := range tests {
		if got := b.execute(ctx, ParseCommand(tt.text), "ada"); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
}
