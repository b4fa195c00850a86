// Package jabber is the Jabber (XMPP) medium (docs/flapjack-1x.md 4.1): a bot that delivers alerts from
// `jabber_notifications` to people (chat) and rooms (groupchat), and takes commands — ACKID
// and bulk acknowledgements, scheduled maintenance, test notifications, status queries — from
// them.
//
// The package owns the bot's XMPP client and what it says and obeys; it does not own the queue,
// retries or the dead-letter list, which belong to the shared runner (gateways.New):
//
//   - Client (client.go) is the XMPP client, built by NewClient. It implements gateways.Sender
//     and gateways.Readier, so the runner claims alerts only while connected: alerts wait in the
//     queue during an outage instead of being retried into the dead-letter list.
//   - The session (connect.go, session.go): Run logs in (STARTTLS, direct TLS or, when
//     explicitly allowed, plain), joins the configured rooms without history, greets them, keeps
//     the connection alive with XEP-0199 pings and reconnects with capped backoff, rejoining the
//     rooms. Each sent alert is followed by a ping whose answer proves the server took the
//     message; an alert is only reported delivered after that.
//   - The commands (incoming.go, command.go, bot.go): a received message is obeyed when its
//     sender is in allowed_jids or in a configured room; it is parsed by ParseCommand (pure) and
//     executed against a Store (RedisStore in production, store.go), and the reply goes back to
//     the room or to the sender's bare JID.
//   - Its settings (Config, config.go) and the wording of alerts (Text, render.go).
package jabber
