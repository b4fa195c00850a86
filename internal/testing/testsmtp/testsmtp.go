// Package testsmtp gives tests a real SMTP server in a separate process: the program in
// smtpd/ (github.com/emersion/go-smtp), built once per test binary, listening on a free
// loopback port with a self-signed certificate, STARTTLS and AUTH PLAIN/LOGIN required (unless
// the test says otherwise), storing every message it accepts as a file the test reads back,
// answering 4xx/5xx for chosen recipients, and able to be stopped and restarted on the same
// port. There are no fakes of the protocol: what the gateway talks to is an SMTP server.
//
// A package using it calls Main from its TestMain, which removes the built program at the end.
package testsmtp

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Default account of a server started without Options.NoAuth.
const (
	User     = "flapjack"
	Password = "s3cret pässword"
)

var (
	buildDir  string
	buildOnce sync.Once
	buildPath string
	buildErr  error
	mainRan   bool
)

// Main runs the package's tests and removes the built server program afterwards. Call it from
// TestMain.
func Main(m *testing.M) {
	mainRan = true
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// Prepare is Main for a package whose TestMain belongs to another harness (testbinary.Main):
// call it first and run the returned cleanup after the tests.
func Prepare() (cleanup func()) {
	mainRan = true
	return func() {
		if buildDir != "" {
			os.RemoveAll(buildDir)
		}
	}
}

// program builds smtpd once per test binary.
func program() (string, error) {
	buildOnce.Do(func() {
		_, self, _, ok := runtime.Caller(0)
		if !ok {
			buildErr = errors.New("cannot locate the testsmtp sources")
			return
		}
		src := filepath.Join(filepath.Dir(self), "smtpd")
		// Read so that `go test` caches results against the program's source too.
		if _, err := os.ReadFile(filepath.Join(src, "main.go")); err != nil {
			buildErr = err
			return
		}
		if buildDir, buildErr = os.MkdirTemp("", "flapjack-testsmtp-"); buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "smtpd")
		cmd := exec.Command("go", "build", "-o", buildPath, ".")
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build smtpd: %v\n%s", err, out)
		}
	})
	return buildPath, buildErr
}

// Options shape a server.
type Options struct {
	// NoSTARTTLS: the server offers no STARTTLS and takes mail in plaintext.
	NoSTARTTLS bool
	// NoAuth: no AUTH offered and none required. Otherwise User/Password is the one account.
	NoAuth bool
	// Replies answer RCPT TO for chosen recipients with an error code (see Reply).
	Replies map[string]Reply
	// DataDelay is how long the server takes to accept each message (a slow MTA), so that a
	// test can stop it while mail is in flight.
	DataDelay time.Duration
}

// Server is one running (or stopped) server program.
type Server struct {
	// Host is the address to dial (127.0.0.1); Port is fixed for the server's life, restarts
	// included.
	Host string
	Port int
	// Dir holds the certificate, messages/ and events.log.
	Dir string
	// CAFile is the server certificate (self-signed, for 127.0.0.1 and localhost), the one CA a
	// client needs to verify it.
	CAFile string

	opts   Options
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	stderr *strings.Builder
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Start starts a server; it is killed when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if !mainRan {
		t.Fatal("testsmtp: call testsmtp.Main(m) from TestMain")
	}
	s := &Server{Host: "127.0.0.1", Dir: t.TempDir(), opts: o}
	s.CAFile = filepath.Join(s.Dir, "cert.pem")
	if err := writeCertificate(s.CAFile, filepath.Join(s.Dir, "key.pem")); err != nil {
		t.Fatalf("testsmtp: certificate: %v", err)
	}
	if err := s.launch("127.0.0.1:0"); err != nil {
		t.Fatalf("testsmtp: %v", err)
	}
	t.Cleanup(s.kill)
	return s
}

// TLSConfig verifies the server's certificate.
func (s *Server) TLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(s.CAFile)
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{RootCAs: pool, ServerName: s.Host, MinVersion: tls.VersionTLS12}
}

func (s *Server) args(addr string) []string {
	args := []string{"-addr", addr, "-dir", s.Dir}
	if !s.opts.NoSTARTTLS {
		args = append(args, "-cert", s.CAFile, "-key", filepath.Join(s.Dir, "key.pem"))
	}
	if !s.opts.NoAuth {
		args = append(args, "-user", User, "-password", Password)
	}
	if s.opts.DataDelay > 0 {
		args = append(args, "-data-delay", s.opts.DataDelay.String())
	}
	rcpts := make([]string, 0, len(s.opts.Replies))
	for rcpt := range s.opts.Replies {
		rcpts = append(rcpts, rcpt)
	}
	slices.Sort(rcpts)
	for _, rcpt := range rcpts {
		r := s.opts.Replies[rcpt]
		spec := fmt.Sprintf("%s=%d", rcpt, r.Code)
		if r.Times > 0 {
			spec += fmt.Sprintf("x%d", r.Times)
		}
		args = append(args, "-reply", spec)
	}
	return args
}

// launch starts the program on addr and waits until it listens.
func (s *Server) launch(addr string) error {
	path, err := program()
	if err != nil {
		return err
	}
	cmd := exec.Command(path, s.args(addr)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// The server must not outlive the test binary, even if that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start smtpd: %w", err)
	}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				listening <- a
			}
		}
	}()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case a := <-listening:
		_, port, _ := net.SplitHostPort(a)
		s.mu.Lock()
		s.Port, _ = strconv.Atoi(port)
		s.cmd, s.exited, s.stderr = cmd, exited, &stderr
		s.mu.Unlock()
		return nil
	case <-exited:
		return fmt.Errorf("smtpd exited at start: %s", strings.TrimSpace(stderr.String()))
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return errors.New("smtpd did not listen within 15s")
	}
}

// Stop shuts the server down with SIGTERM, as an MTA is stopped: it stops accepting
// connections and lets the sessions in progress finish; Stop waits for the process to exit.
// Stored messages stay for Restart.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Errorf("testsmtp: smtpd ignored SIGTERM for 15s and was killed")
	}
}

// Restart stops the server if it runs and starts it again on the same port with the same
// directory (reply counts start again).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err = s.launch(s.Addr()); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("testsmtp: restart on %s: %v", s.Addr(), err)
}

func (s *Server) kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Message is one accepted message.
type Message struct {
	Record
	File string
}

// Parse reads the message as net/mail does.
func (m Message) Parse() (*mail.Message, error) {
	return mail.ReadMessage(strings.NewReader(m.Data))
}

// Messages are the messages accepted so far (all runs of the server), oldest first.
func (s *Server) Messages(t testing.TB) []Message {
	t.Helper()
	dir := filepath.Join(s.Dir, "messages")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("testsmtp: %v", err)
	}
	var out []Message
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatalf("testsmtp: %v", err)
		}
		m := Message{File: e.Name()}
		if err := json.Unmarshal(body, &m.Record); err != nil {
			t.Fatalf("testsmtp: %s: %v", e.Name(), err)
		}
		out = append(out, m)
	}
	return out
}

// WaitMessages waits until at least n messages were accepted and returns them all.
func (s *Server) WaitMessages(t testing.TB, n int, timeout time.Duration) []Message {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msgs := s.Messages(t)
		if len(msgs) >= n {
			return msgs
		}
		if time.Now().After(deadline) {
			t.Fatalf("testsmtp: %d messages after %v, want %d; events:\n%s", len(msgs), timeout, n, s.EventsText())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Events are the lines of events.log: "connect …", "auth PLAIN flapjack tls=true", "mail … refused:
// no tls", "rcpt <addr> <code>", "data <file> …", "listening …", "stopping", "stopped", each after
// a time stamp.
func (s *Server) Events() []string {
	body, err := os.ReadFile(filepath.Join(s.Dir, "events.log"))
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
		if _, ev, ok := strings.Cut(l, " "); ok {
			out = append(out, ev)
		}
	}
	return out
}

// EventsText is events.log as it is, for failure messages.
func (s *Server) EventsText() string {
	body, _ := os.ReadFile(filepath.Join(s.Dir, "events.log"))
	return string(body)
}

// CountEvents counts the events starting with prefix.
func (s *Server) CountEvents(prefix string) int {
	n := 0
	for _, ev := range s.Events() {
		if strings.HasPrefix(ev, prefix) {
			n++
		}
	}
	return n
}

// writeCertificate writes a self-signed certificate (its own CA) for 127.0.0.1 and localhost.
func writeCertificate(certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "testsmtp"},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pemBlock("CERTIFICATE", der), 0o640); err != nil {
		return err
	}
	return os.WriteFile(keyFile, pemBlock("EC PRIVATE KEY", keyDER), 0o600)
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
