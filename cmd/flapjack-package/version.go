package main

import (
	"fmt"
	"regexp"
	"strings"
)

// afterTag is what git describe appends when HEAD is past the nearest tag: commits since it and
// the abbreviated commit.
var afterTag = regexp.MustCompile(`^(.+)-([0-9]+)-g([0-9a-f]+)$`)

// commitOnly is git describe --always without a tag to describe from.
var commitOnly = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

// debianUpstream is a Debian upstream version without a revision: a digit first, then
// alphanumerics and . + ~ (a hyphen would need a Debian revision after it).
var debianUpstream = regexp.MustCompile(`^[0-9][A-Za-z0-9.+~]*$`)

// debVersion maps git describe output to a Debian version that sorts the way the commits do:
//
//	v1.6.0                    1.6.0
//	v1.6.0-rc1                1.6.0~rc1                (a pre-release sorts before 1.6.0)
//	v1.6.0-12-g85c703b        1.6.0+git12.g85c703b     (after 1.6.0, before 1.6.1)
//	85c703b (no tag yet)      0.0.0~git.g85c703b       (before any release)
//	dev (no git)              0.0.0~dev
//
// and -dirty adds .dirty (+dirty on a bare tag).
func debVersion(described string) (string, error) {
	rest, dirty := strings.CutSuffix(described, "-dirty")
	var v string
	switch m := afterTag.FindStringSubmatch(rest); {
	case m != nil:
		v = tagVersion(m[1]) + "+git" + m[2] + ".g" + m[3]
	case commitOnly.MatchString(rest):
		v = "0.0.0~git.g" + rest
	case rest == "dev":
		v = "0.0.0~dev"
	default:
		v = tagVersion(rest)
	}
	if dirty {
		if strings.Contains(v, "+") || strings.Contains(v, "~git") {
			v += ".dirty"
		} else {
			v += "+dirty"
		}
	}
	if !debianUpstream.MatchString(v) {
		return "", fmt.Errorf("version %q: %q is not a Debian version (tags look like v1.2.3 or v1.2.3-rc1)", described, v)
	}
	return v, nil
}

// tagVersion is a tag's version: without its v, a pre-release's hyphen as ~.
func tagVersion(tag string) string {
	return strings.ReplaceAll(strings.TrimPrefix(tag, "v"), "-", "~")
}

// dockerTag is what a Docker tag may be: a word character first, up to 128.
var dockerTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// imageTag is the image's version tag: git describe output as it is (every describe of a
// well-formed tag is a valid Docker tag already).
func imageTag(described string) (string, error) {
	if !dockerTag.MatchString(described) {
		return "", fmt.Errorf("version %q is not a valid image tag", described)
	}
	return described, nil
}
