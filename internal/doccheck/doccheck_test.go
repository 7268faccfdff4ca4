// Package doccheck holds tests of the documentation against the code.
package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// root is the repository's top, two levels up from here.
const root = "../.."

var (
	testName = regexp.MustCompile(`\b(Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*\b`)
	testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)\(`)
	// A script the docs name as a test (build/scripts/xinput-attack.py).
	scriptName = regexp.MustCompile("`((?:build|frontend)/[A-Za-z0-9_./-]+\\.(?:sh|py|mjs))`")
)

// TestDocsNameTestsThatExist: every test, fuzz target and benchmark the
// threat model, the formats and the README name as their proof is a
// function in a _test.go file, and every script they name exists. A
// renamed or removed test leaves no sentence claiming it.
func TestDocsNameTestsThatExist(t *testing.T) {
	defined := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".cache" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
				defined[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !defined["TestDocsNameTestsThatExist"] {
		t.Fatal("self-check: this test did not find itself")
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	named := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for _, name := range testName.FindAllString(string(b), -1) {
			named++
			if !defined[name] {
				missing = append(missing, name)
			}
		}
		for _, m := range scriptName.FindAllStringSubmatch(string(b), -1) {
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				missing = append(missing, m[1])
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			t.Errorf("%s names tests or scripts that do not exist: %s", filepath.Base(doc), strings.Join(missing, ", "))
		}
	}
	if named < 50 {
		t.Errorf("self-check: the docs name %d tests; the threat model alone names more", named)
	}
}
