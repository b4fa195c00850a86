package jabber

import (
	"context"
	"fmt"
	"strings"

	xmpp "github.com/xmppo/go-xmpp"
	"go.uber.org/zap"

	fjtext "github.com/flapjackgo/flapjack/internal/text"
)

// handle treats one received stanza (on the serve goroutine).
func (c *Client) handle(ctx context.Context, s *session, st any) {
	switch v := st.(type) {
	case xmpp.Chat:
		c.handleMessage(ctx, s, v)
	case xmpp.Presence:
		c.handlePresence(s, v)
	}
}

func (c *Client) handlePresence(s *session, p xmpp.Presence) {
	room := bareJID(p.From)
	if !c.rooms[room] {
		return
	}
	nick := strings.TrimPrefix(resourcePart(p.From), "/")
	if nick == "" {
		return
	}
	switch p.Type {
	case "error":
		if strings.EqualFold(nick, c.cfg.Alias) {
			c.log.Error("cannot join room", zap.String("room", room), zap.String("error", p.Error))
		}
	case "unavailable":
		delete(s.occupants[room], nick)
	default:
		if s.occupants[room] == nil {
			s.occupants[room] = map[string]string{}
		}
		s.occupants[room][nick] = bareJID(p.JID)
	}
}

// isOccupant reports whether bare is the real JID of an occupant of a configured room (known
// when the room shows real JIDs to the bot).
func (s *session) isOccupant(bare string) bool {
	for _, nicks := range s.occupants {
		for _, real := range nicks {
			if real != "" && real == bare {
				return true
			}
		}
	}
	return false
}

func (c *Client) handleMessage(ctx context.Context, s *session, m xmpp.Chat) {
	if m.Type == "error" {
		c.log.Warn("the XMPP server bounced a message", zap.String("from", m.Remote), zap.String("text", fjtext.Truncate(m.Text, 200)))
		return
	}
	if strings.TrimSpace(m.Text) == "" || m.Type == "headline" {
		return // chat states, receipts, subjects
	}
	from := m.Remote
	bare := bareJID(from)
	nick := strings.TrimPrefix(resourcePart(from), "/")
	var text, replyTo, replyType, who string
	switch {
	case m.Type == "groupchat":
		if !c.rooms[bare] || nick == "" || strings.EqualFold(nick, c.cfg.Alias) {
			return
		}
		if !m.Stamp.IsZero() {
			return // room history: never re-run old commands
		}
		cmd, ok := roomCommand(m.Text, c.ids)
		if !ok {
			return
		}
		text, replyTo, replyType, who = cmd, bare, "groupchat", nick
	case c.rooms[bare]:
		// A private message from a room occupant.
		if nick == "" {
			return
		}
		text, replyTo, replyType, who = chatCommand(m.Text, c.ids), from, "chat", nick
	default:
		if !c.allowed[bare] && !s.isOccupant(bare) {
			c.log.Warn("ignoring a command from a JID that is neither in gateways.jabber.allowed_jids nor in a room",
				zap.String("from", from), zap.String("text", fjtext.Truncate(m.Text, 200)))
			return
		}
		text, replyTo, replyType, who = chatCommand(m.Text, c.ids), bare, "chat", bare
	}
	if text == "" {
		return
	}
	if !m.Stamp.IsZero() {
		// Stored while the bot was offline (prosody's mod_offline): too old to act on blindly.
		c.log.Warn("ignoring a command sent while the gateway was offline", zap.String("from", from),
			zap.Time("sent", m.Stamp), zap.String("text", fjtext.Truncate(text, 200)))
		s.reply(c.log, replyTo, replyType, fmt.Sprintf("I was offline when you sent '%s' (at %s), so I did nothing; send it again if it still applies.",
			fjtext.Truncate(text, 200), m.Stamp.UTC().Format("2006-01-02 15:04:05 MST")))
		return
	}
	cmd := ParseCommand(text)
	c.log.Info("command", zap.String("from", from), zap.String("command", commandName(cmd)))
	reply := c.bot.execute(ctx, cmd, who)
	s.reply(c.log, replyTo, replyType, reply)
}
