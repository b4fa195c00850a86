package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways/media"
)

// settingsTable renders Settings as the README's configuration table.
func settingsTable() string {
	var b strings.Builder
	b.WriteString("| setting | flag / environment | default | meaning |\n|---|---|---|---|\n")
	for _, s := range media.Table() {
		if s.AliasOf != "" {
			continue
		}
		def := s.Default
		if s.Kind == config.List {
			def = "(none)"
		}
		if def == "" {
			def = "(empty)"
		}
		fmt.Fprintf(&b, "| `%s` | `--%s` `%s` | `%s` | %s |\n", s.Key, s.Flag(), s.Env(), def, strings.ReplaceAll(s.Usage, "|", "\\|"))
	}
	return b.String()
}

// TestReadmeDocumentsEverySetting keeps README's table equal to Settings. Run with
// FLAPJACK_UPDATE_DOCS=1 to rewrite it.
func TestReadmeDocumentsEverySetting(t *testing.T) {
	path := filepath.Join("..", "README.md")
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- settings:begin -->\n", "<!-- settings:end -->"
	i, j := strings.Index(string(body), begin), strings.Index(string(body), end)
	if i < 0 || j < i {
		t.Fatal("README lacks the settings markers")
	}
	want := settingsTable()
	got := string(body[i+len(begin) : j])
	if got == want {
		return
	}
	if os.Getenv("FLAPJACK_UPDATE_DOCS") != "" {
		updated := string(body[:i+len(begin)]) + want + string(body[j:])
		if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("README's settings table is out of date: run FLAPJACK_UPDATE_DOCS=1 go test ./config")
}
