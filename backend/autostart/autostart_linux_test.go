//go:build linux

package autostart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The entry is written where the XDG Autostart specification says, starts
// this executable in the background (quoted, however odd its path), is a
// valid desktop entry, and is removed again.
func TestEntryWrittenAndRemoved(t *testing.T) {
	config := t.TempDir()
	exe := filepath.Join(t.TempDir(), `odd "dir" $HOME 100%`, "yett-desktop")
	env := map[string]string{"XDG_CONFIG_HOME": config, "HOME": "/nonexistent"}
	e := Entry{Exe: exe, Getenv: func(k string) string { return env[k] }}
	want := filepath.Join(config, "autostart", "dev.yett.Yett.desktop")
	if e.Location() != want {
		t.Fatalf("location %q, want %q", e.Location(), want)
	}
	if on, err := e.Enabled(); on || err != nil {
		t.Fatalf("enabled before: %v %v", on, err)
	}
	if err := e.Enable(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	wantExec := `Exec="` + filepath.Dir(filepath.Dir(exe)) + `/odd \"dir\" \$HOME 100%%/yett-desktop" --background`
	if !strings.Contains(text, wantExec+"\n") || !strings.Contains(text, "Type=Application\n") {
		t.Fatalf("entry:\n%s\nwant line %s", text, wantExec)
	}
	if on, err := e.Enabled(); !on || err != nil {
		t.Fatalf("enabled after: %v %v", on, err)
	}
	// desktop-file-validate (Debian package desktop-file-utils) reads it as
	// desktop environments will.
	if out, err := exec.Command("desktop-file-validate", want).CombinedOutput(); err != nil || len(out) != 0 {
		t.Fatalf("desktop-file-validate: %v\n%s", err, out)
	}
	// An entry for another executable is not this one.
	other := Entry{Exe: "/opt/other/yett-desktop", Getenv: e.Getenv}
	if on, _ := other.Enabled(); on {
		t.Fatal("another executable's entry reads as enabled")
	}
	if err := e.Disable(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(want); !os.IsNotExist(err) {
		t.Fatalf("entry still there: %v", err)
	}
	if err := e.Disable(); err != nil {
		t.Fatalf("disabling twice: %v", err)
	}
	// Without XDG_CONFIG_HOME it lives under $HOME/.config.
	home := t.TempDir()
	h := Entry{Exe: exe, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
	if h.Location() != filepath.Join(home, ".config", "autostart", "dev.yett.Yett.desktop") {
		t.Fatalf("location %q", h.Location())
	}
}
