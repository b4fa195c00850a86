package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// SenderOptions wire a Sender.
type SenderOptions struct {
	Config Config
	// Pool and Keys find each contact's timezone (contact_tz:ID) for the Time row; nil Pool:
	// every contact is in DefaultZone.
	Pool *redis.Pool
	Keys schema.Keys
	// DefaultZone is the timezone of contacts without one (notifier.default_contact_timezone,
	// else TZ, else UTC); nil: UTC.
	DefaultZone *time.Location
	// Templates are the operator's templates; nil: the built-in texts.
	Templates *gateways.Templates
	Clock     clock.Clock
	Log       *zap.Logger
}

var _ gateways.ReceiptSender = (*Sender)(nil)

// Sender delivers alerts by SMTP, one connection per alert.
type Sender struct {
	cfg         Config
	tls         *tls.Config
	from, reply *mail.Address
	pool        *redis.Pool
	keys        schema.Keys
	defaultZone *time.Location
	render      renderer
	clock       clock.Clock
	log         *zap.Logger
	zonesMu     sync.Mutex // guards zones and warnedZone
	zones       map[string]*time.Location
	warnedZone  map[string]bool
}

// NewSender checks the configuration and builds a Sender.
func NewSender(o SenderOptions) (*Sender, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := o.Config.withDefaults()
	tlsCfg, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	from, _ := parseAddress(cfg.From)
	reply, _ := parseAddress(cfg.ReplyTo)
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.DefaultZone == nil {
		o.DefaultZone = time.UTC
	}
	return &Sender{cfg: cfg, tls: tlsCfg, from: from, reply: reply, pool: o.Pool, keys: o.Keys,
		defaultZone: o.DefaultZone, render: renderer{tpl: o.Templates, log: o.Log}, clock: o.Clock, log: o.Log,
		zones: map[string]*time.Location{}, warnedZone: map[string]bool{}}, nil
}

// Send mails one alert (see SendReceipt).
func (s *Sender) Send(ctx context.Context, a schema.Alert) error {
	_, err := s.SendReceipt(ctx, a)
	return err
}

// SendReceipt implements gateways.ReceiptSender: it mails one alert and returns the message id
// the server gave it (QueueID). Its error is nil once the server answered 250 to the message,
// a permanent one for a 5xx reply, an address that is not one, a server without the required STARTTLS
// or AUTH, or a certificate that does not verify, and a retryable one for a 4xx reply and any
// connection failure.
func (s *Sender) SendReceipt(ctx context.Context, a schema.Alert) (string, error) {
	to, err := parseAddress(a.Address)
	if err != nil {
		return "", gateways.Permanent(fmt.Errorf("email address of contact %s: %w", a.ContactID, err))
	}
	to.Name = strings.TrimSpace(schema.Deref(a.ContactFirstName) + " " + schema.Deref(a.ContactLastName))
	loc := s.zone(ctx, a.ContactID)
	msg := compose(headers{From: s.from, ReplyTo: s.reply, To: to, MessageID: messageID(a.ID, s.cfg.Hostname),
		Date: s.clock.Now().In(loc)}, s.render.render(a, loc))
	return s.deliver(ctx, to.Address, msg)
}

// zone is the contact's timezone, read from Redis through roster.LoadContacts; the default when
// the contact has none, or it cannot be read (the mail is not held up for a Time row).
func (s *Sender) zone(ctx context.Context, contactID string) *time.Location {
	if s.pool == nil || contactID == "" {
		return s.defaultZone
	}
	conn, err := s.pool.GetContext(ctx)
	if err != nil {
		s.log.Warn("cannot read the contact's timezone; using the default", zap.String("contact", contactID), zap.Error(err))
		return s.defaultZone
	}
	defer conn.Close()
	contacts, err := roster.LoadContacts(conn, s.keys, []string{contactID})
	if err != nil {
		s.log.Warn("cannot read the contact's timezone; using the default", zap.String("contact", contactID), zap.Error(err))
		return s.defaultZone
	}
	if len(contacts) == 0 || contacts[0].Timezone == "" {
		return s.defaultZone
	}
	name := contacts[0].Timezone
	s.zonesMu.Lock()
	defer s.zonesMu.Unlock()
	if loc, ok := s.zones[name]; ok {
		return loc
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		if !s.warnedZone[name] {
			s.warnedZone[name] = true
			s.log.Warn("unknown contact timezone; using the default", zap.String("contact", contactID),
				zap.String("timezone", name))
		}
		return s.defaultZone
	}
	s.zones[name] = loc
	return loc
}

// addr is host:port of the server.
func (s *Sender) addr() string { return net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port)) }

// deliver runs one SMTP conversation: EHLO, STARTTLS, AUTH, MAIL, RCPT, DATA, QUIT, and
// returns the message id the server's reply to the end of DATA gives.
func (s *Sender) deliver(ctx context.Context, rcpt string, msg []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	dialer := net.Dialer{}
	conn, err := dialer.DialContext(ctx, "tcp", s.addr())
	if err != nil {
		return "", s.fail("connect", err)
	}
	// The conversation ends with ctx: its deadline bounds every read and write, and a
	// cancellation (shutdown) closes the connection.
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c, err := smtp.NewClient(conn, s.cfg.Host)
	if err != nil {
		conn.Close()
		return "", s.fail("greeting", err)
	}
	defer c.Close()
	if err := c.Hello(s.cfg.Hostname); err != nil {
		return "", s.fail("EHLO", err)
	}
	secure := false
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(s.tls); err != nil {
			return "", s.fail("STARTTLS", err)
		}
		secure = true
	} else if s.cfg.StartTLS {
		return "", gateways.Permanent(fmt.Errorf("smtp %s: the server does not offer STARTTLS, which smtp_config.starttls requires (set it to false to allow plaintext)", s.addr()))
	}
	if s.cfg.useAuth() {
		if err := s.auth(c, secure); err != nil {
			return "", err
		}
	}
	from := s.from.Address
	if err := c.Mail(from); err != nil {
		return "", s.fail("MAIL FROM:<"+from+">", err)
	}
	if err := c.Rcpt(rcpt); err != nil {
		return "", s.fail("RCPT TO:<"+rcpt+">", err)
	}
	reply, err := s.data(c, msg)
	if err != nil {
		return "", err
	}
	// Accepted (250): what QUIT says no longer matters, and retrying would send it twice.
	if err := c.Quit(); err != nil {
		s.log.Debug("QUIT after a delivered mail failed", zap.String("server", s.addr()), zap.Error(err))
	}
	return QueueID(reply), nil
}

// data sends msg with DATA and returns the server's reply to its end ("2.0.0 Ok: queued as
// 4F1A2"), which net/smtp's Data writer reads but does not give.
func (s *Sender) data(c *smtp.Client, msg []byte) (string, error) {
	id, err := c.Text.Cmd("DATA")
	if err != nil {
		return "", s.fail("DATA", err)
	}
	c.Text.StartResponse(id)
	_, _, err = c.Text.ReadResponse(354)
	c.Text.EndResponse(id)
	if err != nil {
		return "", s.fail("DATA", err)
	}
	w := c.Text.DotWriter()
	if _, err := w.Write(msg); err != nil {
		return "", s.fail("DATA", err)
	}
	if err := w.Close(); err != nil {
		return "", s.fail("DATA", err)
	}
	_, reply, err := c.Text.ReadResponse(250)
	if err != nil {
		return "", s.fail("end of DATA", err)
	}
	return reply, nil
}

// queuedAs finds the id in a reply to the end of DATA: Postfix's "queued as 4F1A2", Exim's
// "id=1tK9Zq-000Abc-3x".
var queuedAs = regexp.MustCompile(`(?i)(?:queued as |\bid=)([A-Za-z0-9._-]+)`)

// QueueID is the message id a server's reply to the end of DATA gives: the id when the reply
// says one as Postfix or Exim do, else the whole reply.
func QueueID(reply string) string {
	if m := queuedAs.FindStringSubmatch(reply); m != nil {
		return m[1]
	}
	return strings.TrimSpace(reply)
}

// auth authenticates with the configured mechanism, which the server must offer; credentials
// never go over plaintext to another host.
func (s *Sender) auth(c *smtp.Client, secure bool) error {
	mech := strings.ToUpper(s.cfg.AuthType)
	ok, offered := c.Extension("AUTH")
	if !ok {
		return gateways.Permanent(fmt.Errorf("smtp %s: the server offers no AUTH, but smtp_config.auth.username is set", s.addr()))
	}
	if !hasWord(offered, mech) {
		return gateways.Permanent(fmt.Errorf("smtp %s: the server offers AUTH %s, not %s (smtp_config.auth.type)", s.addr(), offered, mech))
	}
	if !secure && !isLoopback(s.cfg.Host) {
		return gateways.Permanent(fmt.Errorf("smtp %s: refusing to send the password over a connection without TLS", s.addr()))
	}
	var a smtp.Auth
	switch s.cfg.AuthType {
	case AuthLogin:
		a = &loginAuth{username: s.cfg.Username, password: s.cfg.Password}
	default:
		a = smtp.PlainAuth("", s.cfg.Username, string(s.cfg.Password), s.cfg.Host)
	}
	if err := c.Auth(a); err != nil {
		return s.fail("AUTH "+mech+" as "+s.cfg.Username, err)
	}
	return nil
}

// fail classifies an error of one SMTP step: a 4xx reply is temporary, a 5xx permanent; a
// certificate that does not verify is permanent (retrying cannot change it); any other
// failure (connection refused, reset, timed out) is temporary.
func (s *Sender) fail(step string, err error) error {
	err = fmt.Errorf("smtp %s: %s: %w", s.addr(), step, err)
	var reply *textproto.Error
	if errors.As(err, &reply) {
		if reply.Code >= 500 {
			return gateways.Permanent(err)
		}
		return gateways.Retryable(err, 0)
	}
	var cert *tls.CertificateVerificationError
	if errors.As(err, &cert) {
		return gateways.Permanent(err)
	}
	return gateways.Retryable(err, 0)
}

func hasWord(list, word string) bool {
	for _, w := range strings.Fields(list) {
		if strings.EqualFold(w, word) {
			return true
		}
	}
	return false
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loginAuth is AUTH LOGIN for net/smtp (which has PLAIN and CRAM-MD5 only): the server asks
// "Username:" then "Password:" (draft-murchison-sasl-login); the caller has made sure the
// connection is encrypted or local.
type loginAuth struct {
	username string
	password Secret
}

func (l *loginAuth) Start(*smtp.ServerInfo) (string, []byte, error) { return "LOGIN", nil, nil }

func (l *loginAuth) Next(challenge []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	switch q := strings.ToLower(strings.TrimSpace(string(challenge))); {
	case strings.HasPrefix(q, "username"), strings.HasPrefix(q, "user name"):
		return []byte(l.username), nil
	case strings.HasPrefix(q, "password"):
		return []byte(string(l.password)), nil
	default:
		return nil, fmt.Errorf("AUTH LOGIN: unexpected challenge %q", challenge)
	}
}
