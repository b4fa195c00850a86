package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/flapjackgo/flapjack/internal/humantime"
)

// Source gives the values set on the command line or in the environment (urfave/cli's context
// satisfies it: IsSet is true for a flag given either way, the flag winning over the variable).
type Source interface {
	IsSet(name string) bool
	String(name string) string
}

// Values are the resolved settings.
type Values struct {
	values map[string]any // string or []string
	origin map[string]string
	errs   []string
}

// mediumQueue matches the free-form notifier.<medium>_queue settings.
var mediumQueue = regexp.MustCompile(`^notifier\.([a-z0-9_]+)_queue$`)

// Load resolves every setting: flag, then environment, then the file at path ("" = none),
// then the default. environ is os.Environ() (passed in for tests).
func Load(path string, src Source, environ []string) (*Values, error) {
	file := map[string]any{}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		defer f.Close()
		if file, err = parseYAML(f, path); err != nil {
			return nil, err
		}
	}
	v := &Values{values: map[string]any{}, origin: map[string]string{}}
	for _, s := range Settings {
		switch {
		case src != nil && src.IsSet(s.Flag()):
			v.set(s.Key, src.String(s.Flag()), s.Kind, "--"+s.Flag()+" / "+s.Env())
		case file[s.Key] != nil:
			v.values[s.Key], v.origin[s.Key] = file[s.Key], path
		default:
			v.set(s.Key, s.Default, s.Kind, "default")
		}
	}
	for key, val := range file {
		if mediumQueue.MatchString(key) {
			if _, known := Lookup(key); !known {
				v.values[key], v.origin[key] = val, path
			}
		}
	}
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if rest, ok := strings.CutPrefix(name, "FLAPJACK_NOTIFIER_"); ok && strings.HasSuffix(rest, "_QUEUE") {
			key := "notifier." + strings.ToLower(rest)
			if _, known := Lookup(key); !known {
				v.values[key], v.origin[key] = val, name
			}
		}
	}
	return v, nil
}

func (v *Values) set(key, text string, kind Kind, origin string) {
	if kind == List {
		var items []string
		for _, p := range strings.Split(text, ",") {
			if p = strings.TrimSpace(p); p != "" {
				items = append(items, p)
			}
		}
		v.values[key] = items
	} else {
		v.values[key] = text
	}
	v.origin[key] = origin
}

// parseYAML flattens the file into dotted keys, refusing keys that are not settings so a typo
// cannot silently leave a default in place.
func parseYAML(r io.Reader, path string) (map[string]any, error) {
	var root map[string]any
	dec := yaml.NewDecoder(r)
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	out := map[string]any{}
	var unknown []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, val := range m {
			key := prefix + k
			if sub, ok := val.(map[string]any); ok {
				if _, isSetting := Lookup(key); !isSetting {
					walk(key+".", sub)
					continue
				}
			}
			s, known := Lookup(key)
			if !known && !mediumQueue.MatchString(key) {
				unknown = append(unknown, key)
				continue
			}
			flat, err := flatten(val, s.Kind)
			if err != nil {
				unknown = append(unknown, fmt.Sprintf("%s (%v)", key, err))
				continue
			}
			out[key] = flat
		}
	}
	walk("", root)
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("config file %s: unknown or malformed settings: %s (see `flapjack help` or etc/flapjack.yaml.example)",
			path, strings.Join(unknown, ", "))
	}
	return out, nil
}

func flatten(val any, kind Kind) (any, error) {
	if kind == List {
		switch x := val.(type) {
		case nil:
			return []string{}, nil
		case []any:
			items := make([]string, 0, len(x))
			for _, it := range x {
				items = append(items, fmt.Sprint(it))
			}
			return items, nil
		case string:
			return strings.Split(x, ","), nil
		}
		return nil, fmt.Errorf("want a list")
	}
	switch x := val.(type) {
	case nil:
		return "", nil
	case map[string]any, []any:
		return nil, fmt.Errorf("want a single value")
	default:
		return fmt.Sprint(x), nil
	}
}

func (v *Values) fail(key, format string, args ...any) {
	v.errs = append(v.errs, fmt.Sprintf("%s (from %s): %s", key, v.origin[key], fmt.Sprintf(format, args...)))
}

// Err reports every invalid value read so far, one per line.
func (v *Values) Err() error {
	if len(v.errs) == 0 {
		return nil
	}
	return errors.New("invalid configuration:\n  " + strings.Join(v.errs, "\n  "))
}

// Invalid records a problem found by a caller's own validation of key.
func (v *Values) Invalid(key, format string, args ...any) { v.fail(key, format, args...) }

// String is a setting's text.
func (v *Values) String(key string) string {
	s, _ := v.values[key].(string)
	return strings.TrimSpace(s)
}

// Duration reads a duration setting.
func (v *Values) Duration(key string) time.Duration {
	text := v.String(key)
	if text == "" {
		return 0
	}
	d, err := humantime.Parse(text)
	if err != nil {
		v.fail(key, "%v", err)
	}
	return d
}

// Int reads an integer setting.
func (v *Values) Int(key string) int {
	text := v.String(key)
	n, err := strconv.Atoi(text)
	if err != nil {
		v.fail(key, "%q is not a whole number", text)
	}
	return n
}

// Bool reads a boolean setting.
func (v *Values) Bool(key string) bool {
	b, err := strconv.ParseBool(v.String(key))
	if err != nil {
		v.fail(key, "%q is not true or false", v.String(key))
	}
	return b
}

// List reads a list setting.
func (v *Values) List(key string) []string {
	l, _ := v.values[key].([]string)
	return l
}

// MediumQueues returns every notifier.<medium>_queue setting as medium -> list name; media
// configured with an empty name are left out.
func (v *Values) MediumQueues() map[string]string {
	out := map[string]string{}
	for key := range v.values {
		m := mediumQueue.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		if q := v.String(key); q != "" {
			out[m[1]] = q
		}
	}
	return out
}

// Origin says where a setting's value came from ("default", a flag, the file).
func (v *Values) Origin(key string) string { return v.origin[key] }
