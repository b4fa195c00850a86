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

// exampleFile renders etc/flapjack.yaml.example from Settings.
func exampleFile() string {
	var b strings.Builder
	b.WriteString("# flapjack configuration. Every setting is also a flag (--redis-url) and an environment\n# variable (FLAPJACK_REDIS_URL); flag > environment > this file > default. Durations accept\n# integer seconds, Go durations (90s, 720h) and words (15 minutes, 1 day). Values shown are the\n# defaults; an empty value means none.\n")
	prev := []string{}
	for _, s := range media.Table() {
		if s.AliasOf != "" {
			continue
		}
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
		case s.Kind == config.List:
			val = "[]"
		case val == "":
			val = `""`
		case strings.ContainsAny(val, "%: ") || val == "true" || val == "false":
			if s.Kind != config.Bool {
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
	v, err := config.Load(media.Table(), path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defaults, err := config.Load(media.Table(), "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range media.Table() {
		if s.AliasOf != "" {
			continue
		}
		if got, want := valueOf(v, s), valueOf(defaults, s); got != want {
			t.Errorf("%s: example loads as %s, default is %s", s.Key, got, want)
		}
		if !strings.HasPrefix(v.Origin(s.Key), path+":") {
			t.Errorf("%s: not set by the example file (origin %s)", s.Key, v.Origin(s.Key))
		}
	}
}

// valueOf renders a setting's typed value.
func valueOf(v *config.Values, s config.Setting) string {
	switch s.Kind {
	case config.Duration:
		return v.Duration(s.Key).String()
	case config.Int:
		return fmt.Sprint(v.Int(s.Key))
	case config.Bool:
		return fmt.Sprint(v.Bool(s.Key))
	case config.List:
		return fmt.Sprint(v.List(s.Key))
	}
	return fmt.Sprintf("%q", v.String(s.Key))
}
