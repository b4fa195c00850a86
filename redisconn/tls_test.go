package redisconn

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// anyError: the case must fail, but how depends on timing. With TLS 1.3 the server checks the
// client certificate after the client's handshake is done, so the error surfaces at the first
// read or write, as "certificate required" or as a reset.
const anyError = "(any error)"

func TestTLS(t *testing.T) {
	t.Parallel()
	files := testredis.NewTLSFiles(t)
	srv := testredis.StartTLSServer(t, files)
	mtls := testredis.StartTLSServer(t, files, "--tls-auth-clients", "yes")
	other := testredis.NewTLSFiles(t) // a CA that did not sign the servers

	cases := []struct {
		name    string
		cfg     Config
		wantErr string // "" means Ping must succeed
	}{
		{"CA file", Config{URL: "rediss://" + srv.Addr + "/1", TLS: TLSConfig{CAFile: files.CAFile}}, ""},
		{"CA file, localhost", Config{URL: "rediss://localhost:" + port(srv.Addr) + "/1", TLS: TLSConfig{CAFile: files.CAFile}}, ""},
		{"system roots only", Config{URL: "rediss://" + srv.Addr + "/1"}, "unknown authority"},
		{"another CA", Config{URL: "rediss://" + srv.Addr, TLS: TLSConfig{CAFile: other.CAFile}}, "unknown authority"},
		{"insecure skip verify", Config{URL: "rediss://" + srv.Addr, TLS: TLSConfig{InsecureSkipVerify: true}}, ""},
		{"wrong server name", Config{URL: "rediss://" + srv.Addr, TLS: TLSConfig{CAFile: files.CAFile, ServerName: "redis.example.org"}}, "redis.example.org"},
		{"plain redis:// to a TLS port", Config{URL: "redis://" + srv.Addr, DialTimeout: time.Second}, anyError},
		{"client certificate", Config{URL: "rediss://" + mtls.Addr, TLS: TLSConfig{CAFile: files.CAFile, CertFile: files.ClientCertFile, KeyFile: files.ClientKeyFile}}, ""},
		{"client certificate missing", Config{URL: "rediss://" + mtls.Addr, TLS: TLSConfig{CAFile: files.CAFile}}, anyError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool, err := NewPool(tc.cfg, zaptest.NewLogger(t))
			if err != nil {
				t.Fatalf("NewPool: %v", err)
			}
			defer pool.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = Ping(ctx, pool)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Ping: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("Ping succeeded, want an error containing %q", tc.wantErr)
			case tc.wantErr != "" && tc.wantErr != anyError && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("Ping error %q does not contain %q", err, tc.wantErr)
			}
			if err != nil {
				t.Logf("error as expected: %v", err)
			}
		})
	}
}

func TestTLSFileErrors(t *testing.T) {
	t.Parallel()
	files := testredis.NewTLSFiles(t)
	cases := []struct {
		name    string
		tls     TLSConfig
		wantErr string
	}{
		{"missing CA file", TLSConfig{CAFile: files.Dir + "/nope.pem"}, "redis.tls.ca_file: open"},
		{"CA file without a certificate", TLSConfig{CAFile: files.KeyFile}, "redis.tls.ca_file: no PEM certificate"},
		{"CA file is a directory", TLSConfig{CAFile: files.Dir}, "redis.tls.ca_file"},
		{"key does not match", TLSConfig{CertFile: files.CertFile, KeyFile: files.ClientKeyFile}, "redis.tls.cert_file and redis.tls.key_file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPool(Config{URL: "rediss://127.0.0.1:1", TLS: tc.tls}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("NewPool error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func port(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }
