package strset

import (
	"reflect"
	"testing"
)

func TestUnique(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{}},
		{[]string{"a"}, []string{"a"}},
		{[]string{"b", "a", "b", "c", "a"}, []string{"b", "a", "c"}},
		{[]string{"", "", "x"}, []string{"", "x"}},
	} {
		in := append([]string(nil), tc.in...)
		if got := Unique(in); !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("Unique(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !reflect.DeepEqual(in, tc.in) {
			t.Errorf("Unique changed its input %q to %q", tc.in, in)
		}
	}
}

func TestOf(t *testing.T) {
	s := Of([]string{"a", "b", "a"})
	if len(s) != 2 || !s["a"] || !s["b"] || s["c"] {
		t.Errorf("Of = %v", s)
	}
	if len(Of(nil)) != 0 {
		t.Error("Of(nil) is not empty")
	}
}
