package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// TestReadmeExplainAndRulesTestOutput runs what README's "Explain and rules test" section shows:
// the example contacts and entities imported, examples/timeline.jsonl replayed, then `flapjack
// explain` and the two `flapjack rules test` questions; the output must be the README's, line
// for line, so the section cannot drift from what the commands print.
func TestReadmeExplainAndRulesTestOutput(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"FLAPJACK_REDIS_URL=" + testredis.New(t).URL(), "TZ=UTC"}
	examples := filepath.Join(root, "examples")
	for _, args := range [][]string{
		{"import", "contacts", "-f", filepath.Join(examples, "contacts.json")},
		{"import", "entities", "-f", filepath.Join(examples, "entities.json")},
		{"replay", "-i", filepath.Join(examples, "timeline.jsonl")},
	} {
		if _, errOut, code := flapjack(t, env, "", args...); code != 0 {
			t.Fatalf("flapjack %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
	explain, errOut, code := flapjack(t, env, "", "explain", "db-01.example.com:MySQL")
	if code != 0 {
		t.Fatalf("explain: exit %d: %s", code, errOut)
	}
	want := terminalBlock(t, string(readme), "executive: ok service event")
	if got := strings.Join(strings.SplitAfter(explain, "\n")[:strings.Count(want, "\n")], ""); got != want {
		t.Errorf("flapjack explain printed (first lines):\n%s\nREADME.md shows:\n%s", got, want)
	}
	var rules []string
	for _, args := range [][]string{
		{"rules", "test", "--contact", "ada", "--entity", "db-01.example.com", "--check", "MySQL", "--state", "critical", "--time", "2026-01-05 10:03"},
		{"rules", "test", "--contact", "ada", "--entity", "web-01.example.com", "--check", "HTTP", "--state", "warning", "--time", "2026-01-05 20:00"},
	} {
		out, errOut, code := flapjack(t, env, "", args...)
		if code != 0 {
			t.Fatalf("flapjack %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		rules = append(rules, out)
	}
	want = terminalBlock(t, string(readme), "critical problem of db-01.example.com:MySQL")
	if got := strings.Join(rules, "\n"); got != want {
		t.Errorf("flapjack rules test printed:\n%s\nREADME.md shows:\n%s", got, want)
	}
}

// terminalBlock is the body of README's ```terminal block whose first line contains first.
func terminalBlock(t *testing.T, readme, first string) string {
	t.Helper()
	for _, block := range strings.Split(readme, "```terminal\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		if line, _, _ := strings.Cut(body, "\n"); strings.Contains(line, first) {
			return body
		}
	}
	t.Fatalf("README.md has no terminal block starting with %q", first)
	return ""
}
