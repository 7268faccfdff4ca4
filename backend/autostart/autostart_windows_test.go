//go:build windows

package autostart

import (
	"testing"

	"golang.org/x/sys/windows/registry"
)

// TestRunKeyOnWindows: Enable writes the Run value that starts the app in
// the background, Enabled reads it back (and says no for another
// executable's), Disable removes it. A value the user had is restored.
func TestRunKeyOnWindows(t *testing.T) {
	if k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE|registry.SET_VALUE); err == nil {
		if old, _, err := k.GetStringValue(valueName); err == nil {
			t.Cleanup(func() { k.SetStringValue(valueName, old); k.Close() })
		} else {
			k.Close()
		}
	}
	e := Entry{Exe: `C:\Program Files\Yett\yett-desktop.exe`}
	if err := e.Disable(); err != nil {
		t.Fatal(err)
	}
	if on, err := e.Enabled(); on || err != nil {
		t.Fatalf("enabled before Enable: %v %v", on, err)
	}
	if err := e.Enable(); err != nil {
		t.Fatal(err)
	}
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := k.GetStringValue(valueName)
	k.Close()
	if want := `"C:\Program Files\Yett\yett-desktop.exe" ` + BackgroundFlag; err != nil || v != want {
		t.Fatalf("Run value %q (%v), want %q", v, err, want)
	}
	if on, err := e.Enabled(); !on || err != nil {
		t.Fatalf("enabled after Enable: %v %v", on, err)
	}
	if on, _ := (Entry{Exe: `C:\other\yett-desktop.exe`}).Enabled(); on {
		t.Fatal("another executable's entry reads as enabled")
	}
	if err := e.Disable(); err != nil {
		t.Fatal(err)
	}
	if on, err := e.Enabled(); on || err != nil {
		t.Fatalf("enabled after Disable: %v %v", on, err)
	}
}
