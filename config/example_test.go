package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exampleFile renders etc/flapjack.yaml.example from Settings.
func exampleFile() string {
	var b strings.Builder
	b.WriteString("# flapjack configuration. Every setting is also a flag (--redis-url) and an environment\n# variable (FLAPJACK_REDIS_URL); flag > environment > this file > default. Durations accept\n# integer seconds, Go durations (90s, 720h) and words (15 minutes, 1 day). Values shown are the\n# defaults; an empty value means none.\n")
	prev := []string{}
	for _, s := range Settings {
		parts := strings.Split(s.Key, ".")
		common := 0
		for common < len(prev)-1 && common < len(parts)-1 && prev[common] == parts[common] {
			common++
		}
		if common == 0 {
			b.WriteString("\n")
		}
		for i := common; i < len(parts)-1; i++ {
			fmt.Fprintf(&b, "%s%s:\n", strings.Repeat("  ", i), parts[i])
		}
		ind := strings.Repeat("  ", len(parts)-1)
		for _, line := range wrap(s.Usage, 96-len(ind)) {
			fmt.Fprintf(&b, "%s# %s\n", ind, line)
		}
		val := s.Default
		switch {
		case s.Kind == List:
			val = "[]"
		case val == "":
			val = `""`
		case strings.ContainsAny(val, "%: ") || val == "true" || val == "false":
			if s.Kind != Bool {
				val = fmt.Sprintf("%q", val)
			}
		}
		fmt.Fprintf(&b, "%s%s: %s\n", ind, parts[len(parts)-1], val)
		prev = parts
	}
	return b.String()
}

func wrap(s string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		if len(cur)+len(w)+1 > width && cur != "" {
			lines = append(lines, cur)
			cur = w
		} else if cur == "" {
			cur = w
		} else {
			cur += " " + w
		}
	}
	return append(lines, cur)
}

// TestExampleFileIsGenerated keeps etc/flapjack.yaml.example equal to Settings (every setting,
// its meaning and default) and loadable. FLAPJACK_UPDATE_DOCS=1 rewrites it.
func TestExampleFileIsGenerated(t *testing.T) {
	path := filepath.Join("..", "etc", "flapjack.yaml.example")
	want := exampleFile()
	got, _ := os.ReadFile(path)
	if string(got) != want {
		if os.Getenv("FLAPJACK_UPDATE_DOCS") == "" {
			t.Fatal("etc/flapjack.yaml.example is out of date: run FLAPJACK_UPDATE_DOCS=1 go test ./config")
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := Load(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Settings {
		if s.Kind != List && v.String(s.Key) != s.Default {
			t.Errorf("%s: example loads as %q, default is %q", s.Key, v.String(s.Key), s.Default)
		}
	}
}
