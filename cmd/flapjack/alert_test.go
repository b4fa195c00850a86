package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

func TestAlertRenderShowsTheTemplateOrItsError(t *testing.T) {
	root := filepath.Join("..", "..")
	tpl, alert := filepath.Join(root, "examples", "templates", "alert.text"), filepath.Join(root, "examples", "alert.json")
	out, stderr, code := flapjack(t, nil, "", "alert", "render", "--medium", "log", "--template", tpl, "--alert", alert, "--timezone", "Europe/Berlin")
	if code != 0 || out != "Problem on web-01: HTTP is Critical (HTTP 500) - reply \"ACKID 8f4a2b1c\" to acknowledge at 2026-01-05 11:00 CET\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	broken := filepath.Join(t.TempDir(), "alert.text")
	if err := os.WriteFile(broken, []byte("{{.NoSuchField}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = flapjack(t, nil, "", "alert", "render", "--medium", "log", "--template", broken, "--alert", alert)
	if code != 1 || !strings.Contains(stderr, "NoSuchField") {
		t.Fatalf("a failing template: exit %d, stderr %s", code, stderr)
	}
	_, stderr, code = flapjack(t, nil, "", "alert", "render", "--medium", "pagerduty", "--template", tpl, "--alert", alert)
	if code != 2 || !strings.Contains(stderr, "no templates") {
		t.Fatalf("a medium without templates: exit %d, stderr %s", code, stderr)
	}
}

func TestABrokenTemplateStopsTheGatewayNamingFileAndLine(t *testing.T) {
	db := testredis.New(t)
	broken := filepath.Join(t.TempDir(), "alert.text")
	if err := os.WriteFile(broken, []byte("fine\n{{.Check"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := testbinary.Run(t, []string{"FLAPJACK_REDIS_URL=" + db.URL()}, "", 20*time.Second,
		"gateway", "log", "--gateways-log-templates-alert-text", broken)
	if code != 2 || !strings.Contains(stderr, "gateways.log.templates.alert.text") || !strings.Contains(stderr, broken+":2") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}
