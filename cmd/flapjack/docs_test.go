package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Comments and docs cite the repository's own records of the decisions and of the Flapjack 1.x
// behaviour the code relies on (docs/decisions.md D3, docs/flapjack-1x.md 2.3); a reader has
// nothing else. TestDocCitationsResolve fails on a citation whose heading does not exist and on
// a citation of a document outside the repository (a specification's or a reference's section).
func TestDocCitationsResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	headings := map[string]map[string]bool{}
	for _, doc := range []string{"decisions.md", "flapjack-1x.md"} {
		b, err := os.ReadFile(filepath.Join(root, "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		headings[doc] = map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^#{2,3} ([A-Z]?[0-9.]*[0-9A-Z])\b`).FindAllStringSubmatch(string(b), -1) {
			headings[doc][m[1]] = true
		}
	}
	cite := regexp.MustCompile(`docs/(decisions|flapjack-1x)\.md ([DI][0-9]+|[A-C](\.[0-9]+)?|[1-9]\.[0-9]+)`)
	outside := regexp.MustCompile(`\b(SPEC|reference) ?(§|[0-9]+\.[0-9])`)
	cited := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".lua":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		for _, m := range cite.FindAllStringSubmatch(text, -1) {
			cited++
			if !headings[m[1]+".md"][m[2]] {
				t.Errorf("%s cites %s, which docs/%s.md has no heading for", path, m[0], m[1])
			}
		}
		if path != filepath.Join(root, "cmd", "flapjack", "docs_test.go") {
			for _, m := range outside.FindAllString(text, -1) {
				t.Errorf("%s cites %q, a document outside the repository", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 100 {
		t.Errorf("only %d citations found: the pattern no longer matches how the code cites docs/", cited)
	}
}
