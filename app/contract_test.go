package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The frontend reaches the backend only through frontend/src/lib/backend.ts,
// whose calls are generated from every bound method (calls.gen.ts, checked
// by TestWindowEnumsAreGenerated). Every one of them should be used by the
// window, so a method left bound after its screen went away fails here.
func TestFrontendCallsExistingMethods(t *testing.T) {
	gen, err := os.ReadFile("../frontend/src/lib/calls.gen.ts")
	if err != nil {
		t.Fatal(err)
	}
	calls := regexp.MustCompile(`(?m)^export function (\w+)\(`).FindAllStringSubmatch(string(gen), -1)
	if len(calls) == 0 {
		t.Fatal("found no calls in calls.gen.ts: the pattern is out of date")
	}
	var src strings.Builder
	err = filepath.WalkDir("../frontend/src", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "wailsjs" || d.Name() == "test") {
			if err == nil {
				err = filepath.SkipDir
			}
			return err
		}
		name := d.Name()
		if d.IsDir() || strings.HasSuffix(name, ".gen.ts") || strings.Contains(name, ".test.") ||
			!strings.HasSuffix(name, ".ts") && !strings.HasSuffix(name, ".svelte") {
			return nil
		}
		b, err := os.ReadFile(p)
		src.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var unused []string
	for _, c := range calls {
		if !regexp.MustCompile(`\b` + c[1] + `\b`).MatchString(src.String()) {
			unused = append(unused, c[1])
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("bound but never called by the window: %v", unused)
	}
}

// The closed sets of values the window checks its answers against are
// generated from the Go side (frontend/src/lib/contract.gen.ts): a value
// added in Go (an authorization that can be "suspended", a revocation that
// is "unverified") reaches the window's parser with the same change, or
// this test fails. YETT_UPDATE_CONTRACT=1 rewrites the file.
func TestWindowEnumsAreGenerated(t *testing.T) {
	for path, want := range map[string]string{
		"../frontend/src/lib/contract.gen.ts": windowContract(t),
		"../frontend/src/lib/calls.gen.ts":    windowCalls(t),
	} {
		got, err := os.ReadFile(path)
		if os.Getenv("YETT_UPDATE_CONTRACT") == "1" {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err != nil || string(got) != want {
			t.Errorf("%s is not what the Go side generates (%v): run YETT_UPDATE_CONTRACT=1 go test ./app -run TestWindowEnumsAreGenerated, then fix what no longer type-checks", path, err)
		}
	}
}
