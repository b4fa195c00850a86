package jsonfield

import "testing"

func TestJSONField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw   string
		null  bool
		first byte
	}{
		{"", true, 0},
		{"  ", true, 0},
		{"null", true, 'n'},
		{" null ", true, 'n'},
		{`{"a":1}`, false, '{'},
		{" [1]", false, '['},
		{`"s"`, false, '"'},
		{"nullx", false, 'n'},
	} {
		if got := IsNull([]byte(tc.raw)); got != tc.null {
			t.Errorf("IsNull(%q) = %v, want %v", tc.raw, got, tc.null)
		}
		if got := First([]byte(tc.raw)); got != tc.first {
			t.Errorf("First(%q) = %q, want %q", tc.raw, got, tc.first)
		}
	}
	for _, tc := range []struct{ got, want string }{
		{Join("", "layers"), "layers"},
		{Join("layers[0]", "members"), "layers[0].members"},
		{At("layers", 0), "layers[0]"},
		{At(Join("a", "b"), 12), "a.b[12]"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
