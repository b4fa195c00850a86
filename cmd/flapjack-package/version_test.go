package main

import (
	"errors"
	"os/exec"
	"testing"
)

func TestDebVersion(t *testing.T) {
	cases := []struct{ describe, want string }{
		{"v1.6.0", "1.6.0"},
		{"1.6.0", "1.6.0"},
		{"v1.6.0-rc1", "1.6.0~rc1"},
		{"v1.6.0-12-g85c703b", "1.6.0+git12.g85c703b"},
		{"v1.6.0-rc1-3-g85c703b", "1.6.0~rc1+git3.g85c703b"},
		{"v1.6.0-12-g85c703b-dirty", "1.6.0+git12.g85c703b.dirty"},
		{"v1.6.0-dirty", "1.6.0+dirty"},
		{"85c703b", "0.0.0~git.g85c703b"},
		{"0529ea9", "0.0.0~git.g0529ea9"},
		{"85c703b-dirty", "0.0.0~git.g85c703b.dirty"},
		{"dev", "0.0.0~dev"},
	}
	for _, c := range cases {
		got, err := debVersion(c.describe)
		if err != nil || got != c.want {
			t.Errorf("debVersion(%q) = %q, %v; want %q", c.describe, got, err, c.want)
		}
	}
	for _, bad := range []string{"release-one", "v1.6.0/x", "", "v1_0"} {
		if got, err := debVersion(bad); err == nil {
			t.Errorf("debVersion(%q) = %q, want an error", bad, got)
		}
	}
}

// TestDebVersionsSortAsCommits: dpkg orders the mapped versions the way the commits came.
func TestDebVersionsSortAsCommits(t *testing.T) {
	ordered := []string{"85c703b", "v1.6.0-rc1", "v1.6.0-rc1-3-g85c703b", "v1.6.0", "v1.6.0-2-gabcdef0", "v1.6.0-12-g85c703b", "v1.6.1"}
	for i := 1; i < len(ordered); i++ {
		a, _ := debVersion(ordered[i-1])
		b, _ := debVersion(ordered[i])
		if !dpkgLess(t, a, b) {
			t.Errorf("dpkg does not order %s (%s) before %s (%s)", a, ordered[i-1], b, ordered[i])
		}
	}
}

func TestImageTag(t *testing.T) {
	for _, ok := range []string{"v1.6.0", "v1.6.0-12-g85c703b-dirty", "85c703b", "dev"} {
		if got, err := imageTag(ok); err != nil || got != ok {
			t.Errorf("imageTag(%q) = %q, %v", ok, got, err)
		}
	}
	for _, bad := range []string{"", "-x", "a/b", "v1:2"} {
		if _, err := imageTag(bad); err == nil {
			t.Errorf("imageTag(%q): no error", bad)
		}
	}
}

// dpkgLess asks dpkg itself whether version a sorts before b.
func dpkgLess(t *testing.T, a, b string) bool {
	t.Helper()
	err := exec.Command("dpkg", "--compare-versions", a, "lt", b).Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("dpkg --compare-versions: %v", err)
	}
	return err == nil
}
