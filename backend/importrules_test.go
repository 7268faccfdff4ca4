// Package backend_test holds the import rules of DESIGN.md as a test:
// nothing under backend/ may import Wails (app/ is the only adapter), the
// offline audit verifier must never import the vault, no domain package
// reaches the gateway (only the composition root wires it), and no product
// package imports the test support under internal/testsupport.
package backend_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
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

const testSupport = "github.com/yettdev/yett/internal/testsupport/"

// Test providers and helpers live in internal/testsupport, outside the
// product's folders; only tests import them.
func TestProductNeverImportsTestSupport(t *testing.T) {
	for _, p := range listDeps(t, "github.com/yettdev/yett/...") {
		if strings.HasPrefix(p.ImportPath, testSupport) {
			continue
		}
		for _, d := range p.Deps {
			if strings.HasPrefix(d, testSupport) {
				t.Errorf("%s depends on %s: test support is for tests only", p.ImportPath, d)
			}
		}
	}
}

// That rule must be able to fail too: the OAuth tests do use a test provider.
func TestImportCheckSeesTestSupport(t *testing.T) {
	found := false
	for _, p := range listDeps(t, "-test", "github.com/yettdev/yett/backend/oauth") {
		for _, d := range p.Deps {
			if strings.HasPrefix(d, testSupport) {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("the import check does not see the OAuth tests' test providers")
	}
}

const module = "github.com/yettdev/yett/"

// dependents lists the packages matching patterns that depend, directly or
// not, on pkg.
func dependents(t *testing.T, pkg string, patterns ...string) []string {
	t.Helper()
	var out []string
	for _, p := range listDeps(t, patterns...) {
		if slices.Contains(p.Deps, pkg) {
			out = append(out, p.ImportPath)
		}
	}
	return out
}

// The offline verifier (`yett audit verify`: backend/audit, and
// backend/witness for cosignatures) checks a log with public keys only: it
// must be able to run where no vault exists.
func TestAuditVerifierNeverImportsTheVault(t *testing.T) {
	if got := dependents(t, module+"backend/vault", module+"backend/audit", module+"backend/witness"); len(got) > 0 {
		t.Errorf("%v depend on the vault: the audit verifier must not", got)
	}
	// The same check sees a package that does depend on the vault.
	if got := dependents(t, module+"backend/vault", module+"backend/oauth"); len(got) != 1 {
		t.Errorf("the check does not see oauth's vault dependency: %v", got)
	}
}

// Domain packages speak to agents through backend/agentapi's words, never
// through the gateway: only the composition root (backend/keeper) wires
// the gateway to the rest.
func TestOnlyTheCompositionRootReachesTheGateway(t *testing.T) {
	got := dependents(t, module+"backend/gateway", module+"backend/...")
	if !slices.Equal(got, []string{module + "backend/keeper"}) {
		t.Errorf("packages under backend/ depending on the gateway: %v, want only backend/keeper", got)
	}
	// backend/agentapi is a leaf: it imports nothing of Yett's.
	for _, p := range listDeps(t, module+"backend/agentapi") {
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module) {
				t.Errorf("backend/agentapi depends on %s: it must stay a leaf", d)
			}
		}
	}
}
