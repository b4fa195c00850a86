package testredis

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
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
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TLSFiles is a throwaway PKI in a test's temp dir: a CA, a server certificate for 127.0.0.1,
// ::1 and localhost, and a client certificate, all signed by the CA. Keys are ECDSA P-256 in
// PKCS#8 PEM, which both Go and redis-server (OpenSSL) read.
type TLSFiles struct {
	Dir                           string
	CAFile                        string // CA certificate (PEM)
	CertFile, KeyFile             string // server certificate and key
	ClientCertFile, ClientKeyFile string // client certificate and key, for tls-auth-clients yes
	CAPool                        *x509.CertPool
}

// NewTLSFiles writes a fresh CA, server and client certificate into t.TempDir().
func NewTLSFiles(t testing.TB) *TLSFiles {
	t.Helper()
	dir := t.TempDir()
	f := &TLSFiles{
		Dir:            dir,
		CAFile:         filepath.Join(dir, "ca.crt"),
		CertFile:       filepath.Join(dir, "server.crt"),
		KeyFile:        filepath.Join(dir, "server.key"),
		ClientCertFile: filepath.Join(dir, "client.crt"),
		ClientKeyFile:  filepath.Join(dir, "client.key"),
	}
	now := time.Now()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "flapjack test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("testredis: create CA: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatalf("testredis: parse CA: %v", err)
	}
	writePEM(t, f.CAFile, "CERTIFICATE", caDER)
	f.CAPool = x509.NewCertPool()
	f.CAPool.AddCert(ca)

	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, certFile, keyFile string) {
		key := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatalf("testredis: create %s certificate: %v", cn, err)
		}
		writePEM(t, certFile, "CERTIFICATE", der)
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatalf("testredis: marshal key: %v", err)
		}
		writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	}
	leaf(2, "localhost", x509.ExtKeyUsageServerAuth, f.CertFile, f.KeyFile)
	leaf(3, "flapjack test client", x509.ExtKeyUsageClientAuth, f.ClientCertFile, f.ClientKeyFile)
	return f
}

// ClientConfig trusts the test CA (and presents no client certificate).
func (f *TLSFiles) ClientConfig() *tls.Config {
	return &tls.Config{RootCAs: f.CAPool, MinVersion: tls.VersionTLS12}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testredis: generate key: %v", err)
	}
	return key
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("testredis: %v", err)
	}
}

// StartTLSServer starts a private redis-server that speaks only TLS (--port 0, --tls-port on a
// free loopback port) with the certificates of files and --tls-auth-clients no; extraArgs come
// last and win (for example "--tls-auth-clients", "yes", or "--requirepass", "pw"). Its Addr is
// the TLS port; connect with rediss://Addr/N and files.CAFile. It is stopped when the test
// ends. Restart does not apply to it.
func StartTLSServer(t testing.TB, files *TLSFiles, extraArgs ...string) *Server {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("testredis: TLS tests need redis-server on PATH: %s", InstallHint)
	}
	dir, err := os.MkdirTemp("", "flapjack-redis-tls-")
	if err != nil {
		t.Fatal(err)
	}
	tc := files.ClientConfig()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir}
		args := []string{
			"--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--databases", strconv.Itoa(databases),
			"--tls-cert-file", files.CertFile, "--tls-key-file", files.KeyFile,
			"--tls-ca-cert-file", files.CAFile, "--tls-auth-clients", "no",
			"--logfile", filepath.Join(dir, fmt.Sprintf("redis-%d.log", port)),
		}
		args = append(args, extraArgs...)
		lastErr = s.launchProcess(path, args, port, func() error {
			// With tls-auth-clients yes the handshake needs the client certificate.
			cfg := tc.Clone()
			if cert, err := tls.LoadX509KeyPair(files.ClientCertFile, files.ClientKeyFile); err == nil {
				cfg.Certificates = []tls.Certificate{cert}
			}
			c, err := redis.Dial("tcp", s.Addr, redis.DialUseTLS(true), redis.DialTLSConfig(cfg),
				redis.DialConnectTimeout(time.Second))
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Do("PING")
			if err != nil && isAuthError(err) {
				return nil // answering, just wants a password
			}
			return err
		})
		if lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	os.RemoveAll(dir)
	t.Fatalf("cannot start TLS redis-server: %v", lastErr)
	return nil
}

// isAuthError tells whether a reply error only means "authenticate first".
func isAuthError(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := string(re)
	return len(msg) >= 6 && (msg[:6] == "NOAUTH" || msg[:6] == "WRONGP")
}

// launchProcess runs redis-server with args (its log goes to the file named by --logfile, which
// logTail(port) reads) and waits up to 5 s for ready to succeed. On success s can be
// stopped with Stop or Kill.
func (s *Server) launchProcess(path string, args []string, port int, ready func() error) error {
	cmd := exec.Command(path, args...)
	// The server must not outlive the test binary, even if it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd = cmd
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited at start (port %d busy?): see %s", port, s.logTail(port))
		default:
		}
		if err = ready(); err == nil {
			s.cleanup = func() {
				cmd.Process.Kill()
				<-exited
			}
			return nil
		}
	}
	cmd.Process.Kill()
	<-exited
	return fmt.Errorf("redis-server on port %d not ready within 5s: %v; log: %s", port, err, s.logTail(port))
}
