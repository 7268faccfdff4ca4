// Package backend_test holds the import rules of DESIGN.md as a test:
// nothing under backend/ may import Wails (app/ is the only adapter), and the
// offline audit verifier must never import the vault.
package backend_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

type pkgDeps struct {
	ImportPath string
	Deps       []string
}

func listDeps(t *testing.T, patterns ...string) []pkgDeps {
	t.Helper()
	args := append([]string{"list", "-deps=false", "-json=ImportPath,Deps"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkgDeps
	for {
		var p pkgDeps
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list returned no packages")
	}
	return pkgs
}

func TestBackendNeverImportsWails(t *testing.T) {
	for _, p := range listDeps(t, "github.com/yettdev/yett/backend/...") {
		for _, d := range p.Deps {
			if strings.HasPrefix(d, "github.com/wailsapp/") {
				t.Errorf("%s depends on %s: backend/ must not import Wails", p.ImportPath, d)
			}
		}
	}
}

// The rule must be able to fail: the root package (the desktop app) does
// depend on Wails, and the same check must see it.
func TestImportCheckSeesWails(t *testing.T) {
	found := false
	for _, p := range listDeps(t, "github.com/yettdev/yett/app") {
		for _, d := range p.Deps {
			if strings.HasPrefix(d, "github.com/wailsapp/") {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("the import check does not see app/'s Wails dependency")
	}
}
