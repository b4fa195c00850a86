package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/flapjackgo/flapjack/internal/humantime"
)

// Source gives the setting flags given on the command line: IsSet is true only for a flag the
// user typed (the environment is read by Load itself, so flag > env > file > default holds
// whichever way the command line was parsed).
type Source interface {
	IsSet(name string) bool
	String(name string) string
}

// Values are the settings of one process, parsed and checked by Load. Reading a setting that
// is not in the table, or as the wrong kind, is a programming error and panics (a test builds
// every command's options, so a mistyped key fails the build rather than reading "").
type Values struct {
	table    Table
	values   map[string]any // string, time.Duration, int, bool or []string by Kind
	origin   map[string]string
	warnings []string
}

// MediumQueueSetting is the one setting naming a medium's list, read by the notifier (producer)
// and the medium's gateway (consumer).
func MediumQueueSetting(medium string) string { return "notifier." + medium + "_queue" }

// mediumQueue matches the free-form notifier.<medium>_queue settings (MediumQueueSetting).
var mediumQueue = regexp.MustCompile(`^notifier\.([a-z0-9_]+)_queue$`)

// fileValue is one setting read from the YAML file, with where it stood.
type fileValue struct {
	val  any // string or []string
	line int
}

// Load resolves every setting of table: flag, then environment, then the file at path
// ("" = none), then the default. environ is os.Environ() (passed in for tests). It returns
// every problem at once, each naming the setting, where its value came from and why.
func Load(table Table, path string, src Source, environ []string) (*Values, error) {
	file := map[string]fileValue{}
	var problems []string
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		defer f.Close()
		if file, problems, err = parseYAML(f, path, table); err != nil {
			return nil, err
		}
	}
	env := map[string]string{}
	for _, kv := range environ {
		if name, val, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(name, "FLAPJACK_") {
			env[name] = val
		}
	}
	v := &Values{table: table, values: map[string]any{}, origin: map[string]string{}}
	explicit := map[string]bool{}
	for _, s := range table {
		text, origin, set := resolve(s, path, src, env, file)
		explicit[s.Key] = set
		val, err := parse(s, text)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s (from %s): %v", s.Key, origin, err))
			continue
		}
		v.values[s.Key], v.origin[s.Key] = val, origin
	}
	problems = append(problems, v.applyAliases(explicit)...)
	v.addFreeMediumQueues(path, file, env)
	if len(problems) > 0 {
		slices.Sort(problems)
		return nil, errors.New("invalid configuration:\n  " + strings.Join(problems, "\n  "))
	}
	return v, nil
}

// resolve finds a setting's text and says where it came from and whether it was set at all.
func resolve(s Setting, path string, src Source, env map[string]string, file map[string]fileValue) (any, string, bool) {
	if src != nil && src.IsSet(s.Flag()) {
		return src.String(s.Flag()), "--" + s.Flag(), true
	}
	if val, ok := env[s.Env()]; ok {
		return val, s.Env(), true
	}
	if fv, ok := file[s.Key]; ok {
		return fv.val, fmt.Sprintf("%s:%d", path, fv.line), true
	}
	if s.AliasOf != "" {
		return "", "default", false
	}
	return s.Default, "default", false
}

// parse turns a setting's text (or the file's list) into its typed value.
func parse(s Setting, raw any) (any, error) {
	if s.Kind == List {
		if l, ok := raw.([]string); ok {
			return l, nil
		}
		return SplitList(raw.(string)), nil
	}
	text, ok := raw.(string)
	if !ok {
		return nil, errors.New("want a single value, not a list")
	}
	text = strings.TrimSpace(text)
	switch s.Kind {
	case Duration:
		if text == "" {
			return time.Duration(0), nil
		}
		return humantime.Parse(text)
	case Int:
		n, err := strconv.Atoi(text)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", text)
		}
		return n, nil
	case Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", text)
		}
		return b, nil
	}
	if len(s.Choices) > 0 && !slices.Contains(s.Choices, text) && !(text == "" && s.AliasOf != "") {
		return nil, fmt.Errorf("%q is not one of %s", text, strings.Join(s.Choices, ", "))
	}
	return text, nil
}

// SplitList reads a comma-separated list, as List settings are read from flags and the
// environment: items trimmed, empty ones dropped.
func SplitList(text string) []string {
	var items []string
	for _, p := range strings.Split(text, ",") {
		if p = strings.TrimSpace(p); p != "" {
			items = append(items, p)
		}
	}
	return items
}

// applyAliases carries a deprecated alias's value to its setting, with a warning; an alias
// and its setting both set to different values is an error.
func (v *Values) applyAliases(explicit map[string]bool) []string {
	var problems []string
	for _, s := range v.table {
		if s.AliasOf == "" || !explicit[s.Key] {
			continue
		}
		val, target := v.values[s.Key], s.AliasOf
		if explicit[target] {
			if fmt.Sprint(v.values[target]) != fmt.Sprint(val) {
				problems = append(problems, fmt.Sprintf("%s (from %s) and %s (from %s) name the same thing differently: keep only %s",
					s.Key, v.origin[s.Key], target, v.origin[target], target))
			}
			continue
		}
		v.values[target], v.origin[target] = val, v.origin[s.Key]
		v.warnings = append(v.warnings, fmt.Sprintf("%s (from %s) is deprecated: use %s", s.Key, v.origin[s.Key], target))
	}
	return problems
}

// addFreeMediumQueues keeps notifier.<medium>_queue settings of media the table does not
// list (a third-party gateway's queue), from the file or the environment.
func (v *Values) addFreeMediumQueues(path string, file map[string]fileValue, env map[string]string) {
	for key, fv := range file {
		if _, known := v.table.Lookup(key); !known && mediumQueue.MatchString(key) {
			if s, ok := fv.val.(string); ok {
				v.values[key], v.origin[key] = strings.TrimSpace(s), fmt.Sprintf("%s:%d", path, fv.line)
			}
		}
	}
	for name, val := range env {
		if rest, ok := strings.CutPrefix(name, "FLAPJACK_NOTIFIER_"); ok && strings.HasSuffix(rest, "_QUEUE") {
			key := "notifier." + strings.ToLower(rest)
			if _, known := v.table.Lookup(key); !known {
				v.values[key], v.origin[key] = strings.TrimSpace(val), name
			}
		}
	}
}

// parseYAML flattens the file into dotted keys with their lines. Keys that are not settings
// and values of the wrong shape are problems (a typo must not silently leave a default).
func parseYAML(r io.Reader, path string, table Table) (map[string]fileValue, []string, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("config file %s: %w", path, err)
	}
	out := map[string]fileValue{}
	var problems []string
	if len(doc.Content) == 0 {
		return out, nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("config file %s:%d: want a mapping of sections (redis:, executive:, ...)", path, root.Line)
	}
	var walk func(prefix string, m *yaml.Node)
	walk = func(prefix string, m *yaml.Node) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, val := m.Content[i], m.Content[i+1]
			key := prefix + k.Value
			s, known := table.Lookup(key)
			if val.Kind == yaml.MappingNode && !known {
				walk(key+".", val)
				continue
			}
			where := fmt.Sprintf("%s:%d", path, k.Line)
			if !known && !mediumQueue.MatchString(key) {
				problems = append(problems, fmt.Sprintf("%s (at %s): unknown setting (see `flapjack help settings` or etc/flapjack.yaml.example)", key, where))
				continue
			}
			flat, err := flatten(val, s.Kind)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s (at %s): %v", key, where, err))
				continue
			}
			out[key] = fileValue{val: flat, line: k.Line}
		}
	}
	walk("", root)
	return out, problems, nil
}

func flatten(n *yaml.Node, kind Kind) (any, error) {
	isNull := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	if kind == List {
		switch {
		case isNull:
			return []string{}, nil
		case n.Kind == yaml.SequenceNode:
			items := make([]string, 0, len(n.Content))
			for _, it := range n.Content {
				if it.Kind != yaml.ScalarNode {
					return nil, errors.New("want a list of single values")
				}
				items = append(items, it.Value)
			}
			return items, nil
		case n.Kind == yaml.ScalarNode:
			return SplitList(n.Value), nil
		}
		return nil, errors.New("want a list")
	}
	switch {
	case isNull:
		return "", nil
	case n.Kind == yaml.ScalarNode:
		return n.Value, nil
	}
	return nil, errors.New("want a single value")
}

// Warnings are the deprecated settings in use, for the caller to log.
func (v *Values) Warnings() []string { return v.warnings }

// get returns a setting's value, panicking on a key that is not in the table or is read as
// the wrong kind: both are mistakes in Go code, never in input.
func (v *Values) get(key string, kind Kind) any {
	s, ok := v.table.Lookup(key)
	if !ok {
		if kind == String && mediumQueue.MatchString(key) {
			return v.values[key]
		}
		panic(fmt.Sprintf("config: %q is not a setting", key))
	}
	if s.Kind != kind {
		panic(fmt.Sprintf("config: %q is not read as kind %d", key, kind))
	}
	if s.AliasOf != "" {
		panic(fmt.Sprintf("config: %q is a deprecated alias: read %q", key, s.AliasOf))
	}
	return v.values[key]
}

// String is a string setting's text.
func (v *Values) String(key string) string { s, _ := v.get(key, String).(string); return s }

// Duration is a duration setting.
func (v *Values) Duration(key string) time.Duration { return v.get(key, Duration).(time.Duration) }

// Int is an integer setting.
func (v *Values) Int(key string) int { return v.get(key, Int).(int) }

// Bool is a boolean setting.
func (v *Values) Bool(key string) bool { return v.get(key, Bool).(bool) }

// List is a list setting.
func (v *Values) List(key string) []string { l, _ := v.get(key, List).([]string); return l }

// MediumQueues returns every notifier.<medium>_queue setting as medium -> list name; media
// configured with an empty name are left out.
func (v *Values) MediumQueues() map[string]string {
	out := map[string]string{}
	for key, val := range v.values {
		m := mediumQueue.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		if q, _ := val.(string); q != "" {
			out[m[1]] = q
		}
	}
	return out
}

// Origin says where a setting's value came from ("default", a flag, a variable, file:line).
func (v *Values) Origin(key string) string { return v.origin[key] }

// Invalid formats a problem a component found in a setting's value, naming where it came
// from, for components' Validate errors.
func (v *Values) Invalid(key, format string, args ...any) error {
	return fmt.Errorf("%s (from %s): %s", key, v.origin[key], fmt.Sprintf(format, args...))
}
