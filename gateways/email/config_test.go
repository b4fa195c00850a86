package email

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c := DefaultConfig()
	if c.Host != "localhost" || c.Port != 25 || !c.StartTLS || c.AuthType != AuthPlain || c.Timeout != 30*time.Second {
		t.Errorf("defaults %+v", c)
	}
	if c.From != "flapjack@"+c.Hostname || c.ReplyTo != c.From {
		t.Errorf("From %q Reply-To %q (host %q)", c.From, c.ReplyTo, c.Hostname)
	}
	if c.useAuth() {
		t.Error("authenticates without a username")
	}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}

func TestValidateNamesEverySetting(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Config{Host: "smtp example.com", Port: 70000, AuthType: "cram-md5", Password: "x",
		From: "flapjack@example.com\r\nBcc: evil@example.com", ReplyTo: "a@b, c@d", Timeout: -time.Second, CAFile: notPEM}
	err := c.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, s := range []string{"smtp_config.host", "smtp_config.port", "smtp_config.auth.type", "smtp_config.from",
		"smtp_config.reply_to", "gateways.email.timeout", "smtp_config.ca_file"} {
		if !strings.Contains(err.Error(), "gateways.email."+strings.TrimPrefix(s, "gateways.email.")) {
			t.Errorf("error does not name %s:\n%v", s, err)
		}
	}
	if err := (Config{Password: "x"}).Validate(); err == nil || !strings.Contains(err.Error(), "auth.username") {
		t.Errorf("password without username: %v", err)
	}
	if err := (Config{Password: "x", AuthType: AuthNone}).Validate(); err != nil {
		t.Errorf("auth none with a stray password: %v", err)
	}
}

func TestPasswordNeverPrints(t *testing.T) {
	c := Config{Username: "flapjack", Password: "hunter2-secret"}
	j, _ := json.Marshal(c)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), string(j), fmt.Sprint(c.Password)} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("password printed: %s", s)
		}
	}
}
