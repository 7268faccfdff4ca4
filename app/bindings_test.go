//go:build linux

package app

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The window's contract with the bound Go services is generated from them:
// Wails writes a TypeScript declaration of every bound method and every
// view and form it carries (frontend/src/lib/wailsjs) when the app is built
// with the bindings tag and run. backend.ts calls the services through
// those declarations and the unit tests' fakes implement them, so a method
// renamed or a field changed in Go fails the frontend's type check. This
// test fails when the checked-in files are not what the Go side generates
// now; YETT_UPDATE_CONTRACT=1 rewrites them.
func TestUIContractIsGenerated(t *testing.T) {
	const dir = "../frontend/src/lib/wailsjs"
	work := t.TempDir()
	bin := filepath.Join(work, "yett-bindings")
	build := exec.Command("go", "build", "-tags", "bindings,webkit2_41", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building with the bindings tag: %v\n%s", err, out)
	}
	// The generator reads wails.json in its working directory and writes
	// beside it; the app's data goes to a throwaway directory.
	wailsJSON, err := os.ReadFile("../wails.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "wails.json"), wailsJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	gen := exec.Command(bin)
	gen.Dir = work
	gen.Env = append(os.Environ(), "tsoutputtype=interfaces", "YETT_DATA_DIR="+filepath.Join(work, "data"),
		"XDG_RUNTIME_DIR="+filepath.Join(work, "run"), "DBUS_SESSION_BUS_ADDRESS=disabled:")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("generating the bindings: %v\n%s", err, out)
	}
	got := filepath.Join(work, "frontend/src/lib/wailsjs")
	if os.Getenv("YETT_UPDATE_CONTRACT") == "1" {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(dir, os.DirFS(got)); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, have := readTree(t, got), readTree(t, dir)
	for name, b := range want {
		if h, ok := have[name]; !ok {
			t.Errorf("%s/%s is missing", dir, name)
		} else if !bytes.Equal(h, b) {
			t.Errorf("%s/%s is not what the Go side generates", dir, name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("%s/%s is no longer generated", dir, name)
		}
	}
	if t.Failed() {
		t.Log("run YETT_UPDATE_CONTRACT=1 go test ./app -run TestUIContractIsGenerated, then fix what no longer type-checks (cd frontend && npm run check)")
	}
}

func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
