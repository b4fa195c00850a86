package jsonfield

import "testing"

func TestIsNullAndFirst(t *testing.T) {
	for _, c := range []struct {
		raw   string
		null  bool
		first byte
	}{
		{"", true, 0},
		{"  ", true, 0},
		{"null", true, 'n'},
		{" null\n", true, 'n'},
		{`"x"`, false, '"'},
		{" [1]", false, '['},
		{"{}", false, '{'},
		{"-1", false, '-'},
		{"nullx", false, 'n'},
	} {
		if got := IsNull([]byte(c.raw)); got != c.null {
			t.Errorf("IsNull(%q) = %v, want %v", c.raw, got, c.null)
		}
		if got := First([]byte(c.raw)); got != c.first {
			t.Errorf("First(%q) = %q, want %q", c.raw, got, c.first)
		}
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Join("", "id"), "id"},
		{Join("media", "sms"), "media.sms"},
		{At("layers", 0), "layers[0]"},
		{Join(At("layers", 2), "members"), "layers[2].members"},
		{At(At("steps", 1)+".contacts", 10), "steps[1].contacts[10]"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
