// Package testprosody gives tests a real XMPP server: a private prosody (Debian package
// `prosody`) from PATH, started in a temp dir with its own config on free loopback ports, a
// self-signed certificate for STARTTLS and direct TLS, and a MUC component whose rooms are usable
// as soon as they are created. It listens on 127.0.0.1 only and talks to no other server (s2s is
// disabled). There are no mocks: when prosody is missing the test fails with the install command.
//
// go-xmpp routes connections through HTTP_PROXY when it is set; tests that connect to this
// server should make sure NO_PROXY covers 127.0.0.1 (see EnsureNoProxy).
package testprosody

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// InstallHint is the command that makes the XMPP tests runnable on Debian.
const InstallHint = "apt-get install -y prosody   (or run `make test`, which installs it as root)"

// Domain is the virtual host of every test server; MUCDomain its group-chat component.
const (
	Domain    = "localhost"
	MUCDomain = "conference." + Domain
)

// Server is one running prosody.
type Server struct {
	// Host is the address to dial (always 127.0.0.1).
	Host string
	// Port accepts plain connections that may upgrade with STARTTLS.
	Port int
	// TLSPort accepts direct TLS connections (XEP-0368).
	TLSPort int
	// Dir holds the config, data, certificate, pidfile and log.
	Dir string
	// ConfigPath is the generated prosody config.
	ConfigPath string

	prosody, prosodyctl string
	mu                  sync.Mutex
	cmd                 *exec.Cmd
	exited              chan struct{}
}

// Addr is host:port of the c2s (STARTTLS-capable) listener.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// TLSAddr is host:port of the direct-TLS listener.
func (s *Server) TLSAddr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.TLSPort)) }

// JID is user@Domain.
func JID(user string) string { return user + "@" + Domain }

// Room is the JID of a group-chat room on the server's MUC component.
func Room(name string) string { return name + "@" + MUCDomain }

// Start starts a private prosody; it is stopped and its directory removed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	prosody, err1 := exec.LookPath("prosody")
	prosodyctl, err2 := exec.LookPath("prosodyctl")
	if err1 != nil || err2 != nil {
		t.Fatalf("prosody is not installed (needed for the XMPP tests)\ninstall it with: %s", InstallHint)
	}
	dir := t.TempDir()
	s := &Server{Host: "127.0.0.1", Dir: dir, ConfigPath: filepath.Join(dir, "prosody.cfg.lua"),
		prosody: prosody, prosodyctl: prosodyctl}
	if err := writeCertificate(filepath.Join(dir, "certs")); err != nil {
		t.Fatalf("testprosody: certificate: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o750); err != nil {
		t.Fatalf("testprosody: %v", err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		ports, err := freePorts(2)
		if err != nil {
			t.Fatalf("testprosody: free ports: %v", err)
		}
		s.Port, s.TLSPort = ports[0], ports[1]
		if err := s.writeConfig(); err != nil {
			t.Fatalf("testprosody: config: %v", err)
		}
		if lastErr = s.launch(); lastErr == nil {
			t.Cleanup(s.kill)
			return s
		}
	}
	t.Fatalf("testprosody: cannot start prosody: %v", lastErr)
	return nil
}

// Register creates an account (prosodyctl register) and returns its bare JID.
func (s *Server) Register(t testing.TB, user, password string) string {
	t.Helper()
	cmd := exec.Command(s.prosodyctl, "--config", s.ConfigPath, "register", user, Domain, password)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testprosody: register %s: %v: %s", user, err, out)
	}
	return JID(user)
}

// Stop shuts prosody down with SIGTERM (connected clients get a stream error) and waits for it.
// Accounts and offline messages are kept for Restart.
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
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Logf("testprosody: prosody ignored SIGTERM for 10s and was killed")
	}
}

// Restart stops prosody if it runs and starts it again on the same ports with the same data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err = s.launch(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("testprosody: restart: %v", err)
}

// LogTail returns the last lines of prosody's log, for failure messages.
func (s *Server) LogTail(lines int) string {
	b, err := os.ReadFile(filepath.Join(s.Dir, "prosody.log"))
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

func (s *Server) kill() {
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
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// launch starts prosody in the foreground and waits until both listeners accept connections.
func (s *Server) launch() error {
	cmd := exec.Command(s.prosody, "-F", "--config", s.ConfigPath)
	cmd.Dir = s.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// prosody must not outlive the test binary, even if that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start prosody: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("prosody exited at start (ports %d/%d busy?): %s\n%s", s.Port, s.TLSPort,
				strings.TrimSpace(out.String()), s.LogTail(10))
		default:
		}
		if listening(s.Addr()) && listening(s.TLSAddr()) {
			s.mu.Lock()
			s.cmd, s.exited = cmd, exited
			s.mu.Unlock()
			return nil
		}
		time.Sleep(30 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-exited
	return errors.New("prosody did not listen within 15s:\n" + s.LogTail(10))
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func (s *Server) writeConfig() error {
	q := strconv.Quote
	var b strings.Builder
	if os.Geteuid() == 0 {
		// Otherwise prosody refuses to start, and prosodyctl switches to the prosody user.
		b.WriteString("run_as_root = true\n")
	}
	fmt.Fprintf(&b, `daemonize = false
pidfile = %s
data_path = %s
certificates = %s
log = { { levels = { min = "info" }, to = "file", filename = %s } }
interfaces = { "127.0.0.1" }
local_interfaces = { "127.0.0.1" }
c2s_interfaces = { "127.0.0.1" }
c2s_ports = { %d }
c2s_direct_tls_interfaces = { "127.0.0.1" }
c2s_direct_tls_ports = { %d }
legacy_ssl_ports = { }
s2s_ports = { }
component_ports = { }
http_ports = { }
https_ports = { }
modules_enabled = { "roster", "saslauth", "tls", "disco", "ping", "posix" }
modules_disabled = { "s2s" }
c2s_require_encryption = false
allow_unencrypted_plain_auth = true
authentication = "internal_hashed"
storage = "internal"

VirtualHost %s

Component %s "muc"
  muc_room_locking = false
`, q(filepath.Join(s.Dir, "prosody.pid")), q(filepath.Join(s.Dir, "data")), q(filepath.Join(s.Dir, "certs")),
		q(filepath.Join(s.Dir, "prosody.log")), s.Port, s.TLSPort, q(Domain), q(MUCDomain))
	return os.WriteFile(s.ConfigPath, []byte(b.String()), 0o640)
}

// writeCertificate writes a self-signed certificate for Domain and MUCDomain where prosody's
// certificate directory lookup finds it (certs/localhost.crt and .key).
func writeCertificate(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: Domain},
		DNSNames:              []string{Domain, MUCDomain},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	k := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(filepath.Join(dir, Domain+".crt"), crt, 0o640); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, Domain+".key"), k, 0o640)
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// EnsureNoProxy makes sure connections to 127.0.0.1 bypass HTTP_PROXY (go-xmpp honours it).
// Call it from TestMain, before any test runs in parallel.
func EnsureNoProxy() {
	if os.Getenv("HTTP_PROXY") == "" && os.Getenv("http_proxy") == "" {
		return
	}
	for _, name := range []string{"NO_PROXY", "no_proxy"} {
		v := os.Getenv(name)
		if !strings.Contains(v, "127.0.0.1") {
			if v != "" {
				v += ","
			}
			os.Setenv(name, v+"127.0.0.1")
		}
	}
}
