// Package email is the email medium (docs/flapjack-1x.md 4.3, docs/decisions.md D13): Sender delivers the alerts of
// `email_notifications` over SMTP, one connection per alert, behind the shared queue runner of
// package gateways, which does the retries and dead-lettering; Sender only delivers and
// classifies failures. A reply of 4xx and a connection that fails are temporary (retried), a
// 5xx reply is permanent (dead-lettered at once).
//
// The connection is upgraded with STARTTLS whenever the server offers it; with `starttls: true`
// (the default) a server that does not offer it is refused rather than spoken to in plaintext.
// Credentials (AUTH PLAIN or LOGIN) are never sent over an unencrypted connection to another
// host, and the password never appears in logs or errors.
//
// Each mail is multipart/alternative, a text and an HTML part in UTF-8, with the subject and
// both bodies from the medium's templates (operators may replace any of them). Nothing an alert
// carries — summaries, entity and check names, contact names, addresses — can add a header:
// header values are stripped of control characters and encoded, addresses are parsed with
// net/mail.
package email

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/mail"
	"os"
	"strings"
	"time"
)

// Medium is the medium name of this gateway (alerts' "media", the queue email_notifications).
const Medium = "email"

// SASL mechanisms of smtp_config.auth.type.
const (
	AuthPlain = "plain"
	AuthLogin = "login"
	AuthNone  = "none"
)

// Defaults of the settings.
const (
	DefaultHost    = "localhost"
	DefaultPort    = 25
	DefaultTimeout = 30 * time.Second
)

// Secret is a password: it prints as "[redacted]" however it is formatted or logged.
type Secret string

const redacted = "[redacted]"

func (Secret) String() string                 { return redacted }
func (Secret) GoString() string               { return redacted }
func (Secret) MarshalText() ([]byte, error)   { return []byte(redacted), nil }
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// Config is the `gateways.email` section; the SMTP fields keep the names of Flapjack 1.x's
// smtp_config. Zero values take the defaults noted on each field, except StartTLS, whose zero
// value (false) allows plaintext: DefaultConfig sets it.
type Config struct {
	// Host and Port are the SMTP server (smtp_config.host, smtp_config.port); default
	// localhost:25.
	Host string
	Port int
	// StartTLS requires STARTTLS (smtp_config.starttls, default true): a server that does not
	// offer it is refused (the alert is dead-lettered). false: STARTTLS when offered, else
	// plaintext.
	StartTLS bool
	// AuthType is the SASL mechanism (smtp_config.auth.type): plain (default), login or none.
	// Credentials are sent only when Username is set.
	AuthType string
	// Username and Password are the SMTP account (smtp_config.auth.username, .password).
	Username string
	Password Secret
	// From is the sender (smtp_config.from), "Flapjack <flapjack@example.com>" or a bare
	// address; default flapjack@<this host's name>. Its address is also the envelope sender.
	From string
	// ReplyTo is the Reply-To address (smtp_config.reply_to); default From.
	ReplyTo string
	// CAFile holds the PEM certificates that verify the server (smtp_config.ca_file); default:
	// the system's roots.
	CAFile string
	// InsecureSkipVerify accepts any server certificate (smtp_config.insecure_skip_verify):
	// for tests only.
	InsecureSkipVerify bool
	// Timeout bounds one alert's whole SMTP conversation, connecting included (timeout);
	// default 30s. A conversation that times out is retried like a network error.
	Timeout time.Duration
	// Hostname names this host in EHLO, the default From and Message-IDs; default os.Hostname.
	Hostname string
}

// DefaultConfig is a Config with every default filled in.
func DefaultConfig() Config {
	return Config{StartTLS: true}.withDefaults()
}

func (c Config) withDefaults() Config {
	c.Host = strings.TrimSpace(c.Host)
	if c.Host == "" {
		c.Host = DefaultHost
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	c.AuthType = strings.ToLower(strings.TrimSpace(c.AuthType))
	if c.AuthType == "" {
		c.AuthType = AuthPlain
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Hostname == "" {
		c.Hostname, _ = os.Hostname()
	}
	c.Hostname = hostnameOrLocalhost(c.Hostname)
	if strings.TrimSpace(c.From) == "" {
		c.From = "flapjack@" + c.Hostname
	}
	if strings.TrimSpace(c.ReplyTo) == "" {
		c.ReplyTo = c.From
	}
	return c
}

// hostnameOrLocalhost keeps a host name usable in EHLO and a Message-ID: letters, digits, dots
// and dashes; anything else, or nothing, is "localhost".
func hostnameOrLocalhost(h string) string {
	h = strings.Trim(strings.TrimSpace(h), ".")
	if h == "" || len(h) > 253 {
		return "localhost"
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			return "localhost"
		}
	}
	return h
}

// useAuth says whether credentials are to be sent.
func (c Config) useAuth() bool { return c.AuthType != AuthNone && c.Username != "" }

// Validate checks the settings (zero values count as their defaults) and reports every
// problem, each naming its setting.
func (c Config) Validate() error {
	replyToGiven := strings.TrimSpace(c.ReplyTo) != ""
	c = c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if strings.ContainsAny(c.Host, " \t\r\n/") {
		bad("gateways.email.smtp_config.host must be a host name or address, got %q", c.Host)
	}
	if c.Port < 1 || c.Port > 65535 {
		bad("gateways.email.smtp_config.port must be 1..65535, got %d", c.Port)
	}
	switch c.AuthType {
	case AuthPlain, AuthLogin, AuthNone:
	default:
		bad("gateways.email.smtp_config.auth.type must be plain, login or none, got %q", c.AuthType)
	}
	if c.Password != "" && c.Username == "" && c.AuthType != AuthNone {
		bad("gateways.email.smtp_config.auth.password is set but auth.username is not")
	}
	if strings.ContainsAny(c.Username, "\r\n\x00") {
		bad("gateways.email.smtp_config.auth.username must be one line")
	}
	if _, err := parseAddress(c.From); err != nil {
		bad("gateways.email.smtp_config.from: %v", err)
	}
	if _, err := parseAddress(c.ReplyTo); err != nil && replyToGiven {
		bad("gateways.email.smtp_config.reply_to: %v", err)
	}
	if c.Timeout < 0 {
		bad("gateways.email.timeout must be positive, got %s", c.Timeout)
	}
	if c.CAFile != "" {
		if _, err := loadCAs(c.CAFile); err != nil {
			bad("gateways.email.smtp_config.ca_file: %v", err)
		}
	}
	return errors.Join(errs...)
}

// parseAddress reads one address ("Name <a@b>" or "a@b") with net/mail, refusing anything else
// (lists, groups, line breaks).
func parseAddress(s string) (*mail.Address, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, fmt.Errorf("%q is not one address: it contains a line break", s)
	}
	a, err := mail.ParseAddress(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("%q is not an email address: %v", s, err)
	}
	return a, nil
}

func loadCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// tlsConfig verifies the server as Host (or not at all with InsecureSkipVerify).
func (c Config) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.InsecureSkipVerify}
	if c.CAFile != "" {
		pool, err := loadCAs(c.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
