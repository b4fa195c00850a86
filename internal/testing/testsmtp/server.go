package testsmtp

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Config is what one run of the server program serves (its flags, see smtpd/main.go).
type Config struct {
	// Addr is where to listen ("127.0.0.1:0": a free port).
	Addr string
	// Dir receives one JSON file per accepted message (messages/) and events.log.
	Dir string
	// CertFile and KeyFile enable STARTTLS; empty: the server offers none and takes mail in
	// plaintext.
	CertFile, KeyFile string
	// Users are the accounts AUTH PLAIN and AUTH LOGIN accept; empty: no AUTH offered and none
	// required.
	Users map[string]string
	// Replies answer RCPT TO for chosen recipients with an error code.
	Replies map[string]Reply
	// DataDelay is how long the server takes to accept each message (a slow MTA).
	DataDelay time.Duration
}

// Reply is how the server answers RCPT TO for one recipient: Code (4xx or 5xx) for the first
// Times attempts (0: every attempt), then 250. Counts start again when the program restarts.
type Reply struct {
	Code  int
	Times int
}

// Record is one accepted message as the server stores it.
type Record struct {
	From     string    `json:"from"`
	To       []string  `json:"to"`
	AuthUser string    `json:"auth_user"`
	TLS      bool      `json:"tls"`
	Helo     string    `json:"helo"`
	Received time.Time `json:"received"`
	Data     string    `json:"data"`
	// QueueID is the id the server gave the message, in its reply to the end of DATA as
	// Postfix words it: "250 2.0.0 Ok: queued as QUEUEID".
	QueueID string `json:"queue_id"`
}

// Serve listens on cfg.Addr, calls ready with the address it listens on, and serves until ctx
// ends; then it stops taking connections and lets the sessions in progress finish (10 s at
// most), as a real MTA does on SIGTERM.
func Serve(ctx context.Context, cfg Config, ready func(addr string)) error {
	for _, d := range []string{cfg.Dir, filepath.Join(cfg.Dir, "messages")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return err
		}
	}
	events, err := os.OpenFile(filepath.Join(cfg.Dir, "events.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer events.Close()
	be := &backend{cfg: cfg, events: events, seen: map[string]int{}}
	srv := smtp.NewServer(be)
	srv.Domain = "testsmtp.localhost"
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	srv.MaxMessageBytes = 10 << 20
	srv.MaxRecipients = 50
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return fmt.Errorf("certificate: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	} else {
		// Without TLS there is nothing to wait for: AUTH may go in plaintext.
		srv.AllowInsecureAuth = true
	}
	l, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	be.event("listening %s", l.Addr())
	ready(l.Addr().String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	be.event("stopping")
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil {
		_ = srv.Close()
	}
	<-served
	be.event("stopped")
	return nil
}

type backend struct {
	cfg    Config
	events io.Writer
	mu     sync.Mutex
	seen   map[string]int // RCPT attempts per recipient
	seq    atomic.Int64
}

// event appends one line to events.log.
func (b *backend) event(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(b.events, time.Now().UTC().Format("15:04:05.000000")+" "+format+"\n", args...)
}

func (b *backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	b.event("connect %s helo=%s", c.Conn().RemoteAddr(), c.Hostname())
	return &session{b: b, c: c}, nil
}

type session struct {
	b    *backend
	c    *smtp.Conn
	user string
	from string
	to   []string
}

func (s *session) tls() bool { _, ok := s.c.TLSConnectionState(); return ok }

// AuthMechanisms implements smtp.AuthSession: PLAIN and LOGIN when accounts exist.
func (s *session) AuthMechanisms() []string {
	if len(s.b.cfg.Users) == 0 {
		return nil
	}
	return []string{sasl.Plain, sasl.Login}
}

// Auth implements smtp.AuthSession.
func (s *session) Auth(mech string) (sasl.Server, error) {
	check := func(user, password string) error {
		if want, ok := s.b.cfg.Users[user]; !ok || want != password {
			s.b.event("auth %s %s refused", mech, user)
			return smtp.ErrAuthFailed
		}
		s.user = user
		s.b.event("auth %s %s tls=%v", mech, user, s.tls())
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, user, password string) error {
			if identity != "" && identity != user {
				return smtp.ErrAuthFailed
			}
			return check(user, password)
		}), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.b.cfg.CertFile != "" && !s.tls() {
		s.b.event("mail %s refused: no tls", from)
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Must issue a STARTTLS command first"}
	}
	if len(s.b.cfg.Users) > 0 && s.user == "" {
		s.b.event("mail %s refused: no auth", from)
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.b.mu.Lock()
	n := s.b.seen[to]
	s.b.seen[to] = n + 1
	s.b.mu.Unlock()
	if r, ok := s.b.cfg.Replies[to]; ok && (r.Times == 0 || n < r.Times) {
		s.b.event("rcpt %s %d", to, r.Code)
		return &smtp.SMTPError{Code: r.Code, EnhancedCode: smtp.EnhancedCode{r.Code / 100, 0, 0},
			Message: fmt.Sprintf("test reply %d for <%s>", r.Code, to)}
	}
	s.b.event("rcpt %s 250", to)
	s.to = append(s.to, to)
	return nil
}

// Data stores the message (write, then rename: a reader never sees half a file) before the
// client is told 250 with the message's queue id.
func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	time.Sleep(s.b.cfg.DataDelay)
	name := fmt.Sprintf("%020d-%06d.json", time.Now().UnixNano(), s.b.seq.Add(1))
	sum := sha256.Sum256([]byte(name))
	rec := Record{From: s.from, To: s.to, AuthUser: s.user, TLS: s.tls(), Helo: s.c.Hostname(),
		Received: time.Now().UTC(), Data: string(data), QueueID: strings.ToUpper(hex.EncodeToString(sum[:5]))}
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	dir := filepath.Join(s.b.cfg.Dir, "messages")
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, body, 0o640); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	s.b.event("data %s from=%s to=%s bytes=%d", name, s.from, strings.Join(s.to, ","), len(data))
	// A 250 "error" is go-smtp's way to answer the end of DATA with a text of one's own.
	return &smtp.SMTPError{Code: 250, EnhancedCode: smtp.EnhancedCode{2, 0, 0}, Message: "Ok: queued as " + rec.QueueID}
}

func (s *session) Reset() { s.from, s.to = "", nil }

func (s *session) Logout() error { return nil }

// loginServer is the server side of AUTH LOGIN (draft-murchison-sasl-login): "Username:" and
// "Password:" challenges, the username possibly sent as the initial response.
type loginServer struct {
	check    func(user, password string) error
	user     string
	haveUser bool
}

func (l *loginServer) Next(response []byte) (challenge []byte, done bool, err error) {
	switch {
	case !l.haveUser && response == nil:
		return []byte("Username:"), false, nil
	case !l.haveUser:
		l.user, l.haveUser = string(response), true
		return []byte("Password:"), false, nil
	case response == nil:
		return nil, false, errors.New("LOGIN: password missing")
	}
	if err := l.check(l.user, string(response)); err != nil {
		return nil, false, err
	}
	return nil, true, nil
}
