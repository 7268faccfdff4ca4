//go:build dev

package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevBuildGuard: a dev build runs only on a data directory it created
// itself and a runtime directory of its own.
func TestDevBuildGuard(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "xdg-run"))
	t.Setenv("YETT_DEV_THROWAWAY_VAULT", "1")
	fresh := filepath.Join(t.TempDir(), "data")
	run := filepath.Join(t.TempDir(), "run")
	check := func(data, runtime string) error {
		t.Setenv("YETT_DATA_DIR", data)
		t.Setenv("YETT_RUNTIME_DIR", runtime)
		return checkBuild(Config{DataDir: data, RuntimeDir: runtime})
	}
	if err := check(fresh, run); err != nil {
		t.Fatalf("a fresh directory: %v", err)
	}
	if err := check(fresh, run); err != nil {
		t.Fatalf("its own marked directory again: %v", err)
	}
	real := filepath.Join(t.TempDir(), "someone")
	os.MkdirAll(real, 0o700)
	os.WriteFile(filepath.Join(real, "vault.db"), []byte("x"), 0o600)
	if err := check(real, run); err == nil || !strings.Contains(err.Error(), "did not create") {
		t.Fatalf("a directory with a vault in it: %v", err)
	}
	realData := filepath.Join(home, ".local", "share", "yett")
	if err := check(realData, run); err == nil {
		t.Fatal("the user's real data directory was accepted")
	}
	realRun := filepath.Join(home, "xdg-run", "yett")
	if err := check(fresh, realRun); err == nil {
		t.Fatal("the user's real runtime directory was accepted")
	}
	t.Setenv("YETT_RUNTIME_DIR", "")
	if err := checkBuild(Config{DataDir: fresh, RuntimeDir: run}); err == nil {
		t.Fatal("no YETT_RUNTIME_DIR was accepted")
	}
}
