package busenv

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"
)

func TestPinned(t *testing.T) {
	dir := t.TempDir()
	socket := func(p string) bool { return p == filepath.Join(dir, "bus") }
	none := func(string) bool { return false }
	cases := []struct {
		name, current, runtime string
		isSocket               func(string) bool
		want                   string
		change                 bool
	}{
		{"a bus is set", "unix:path=/run/user/1000/bus", dir, socket, "unix:path=/run/user/1000/bus", false},
		{"disabled stays disabled", "disabled:", dir, socket, "disabled:", false},
		{"nothing set, the runtime directory's bus", "", dir, socket, "unix:path=" + dbus.EscapeBusAddressValue(filepath.Join(dir, "bus")), true},
		{"nothing anywhere", "", dir, none, Disabled, true},
		{"no runtime directory", "", "", socket, Disabled, true},
		{"autolaunch alone is no bus", "autolaunch:", dir, none, Disabled, true},
		{"autolaunch with a scope", "autolaunch:scope=*user", dir, socket, "unix:path=" + dbus.EscapeBusAddressValue(filepath.Join(dir, "bus")), true},
		{"autolaunch as a fallback is dropped", "unix:path=/x;autolaunch:", dir, none, "unix:path=/x", true},
		{"autolaunch first is dropped", "autolaunch:;tcp:host=127.0.0.1,port=1", dir, none, "tcp:host=127.0.0.1,port=1", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, change := Pinned(c.current, c.runtime, c.isSocket)
			if got != c.want || change != c.change {
				t.Fatalf("Pinned(%q) = %q, %v; want %q, %v", c.current, got, change, c.want, c.change)
			}
		})
	}
}

// The runtime directory's path is the person's: any byte must come out as
// an address godbus, GLib and libdbus parse back to the same path.
func FuzzPinned(f *testing.F) {
	for _, s := range []string{"", "autolaunch:", "unix:path=/x;autolaunch:", "disabled:", ";;"} {
		f.Add(s, "/run/user/1000")
	}
	f.Add("", "/tmp/a b;c=d,e%f\x00\xff")
	f.Fuzz(func(t *testing.T, current, runtime string) {
		got, change := Pinned(current, runtime, func(string) bool { return true })
		if got == "" || change == (got == current) {
			t.Fatalf("Pinned(%q, %q) = %q, %v", current, runtime, got, change)
		}
		for _, a := range strings.Split(got, ";") {
			if strings.HasPrefix(a, "autolaunch:") {
				t.Fatalf("Pinned(%q) kept an autolaunch entry: %q", current, got)
			}
		}
		kept := false
		for _, a := range strings.Split(current, ";") {
			kept = kept || a != "" && !strings.HasPrefix(a, "autolaunch:")
		}
		if want := "unix:path=" + dbus.EscapeBusAddressValue(filepath.Join(runtime, "bus")); !kept && runtime != "" && got != want {
			t.Fatalf("runtime %q gave %q, want %q", runtime, got, want)
		}
	})
}

// The init order argument in the package doc holds only while this
// package imports nothing outside what os/exec (which godbus needs before
// the keyring library's init can run) already imports.
func TestImportsStayWithinOSExec(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-json=Imports,Deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		var p struct{ Imports, Deps []string }
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatal(err)
		}
		return append(p.Imports, p.Deps...)
	}
	osExec := map[string]bool{}
	for _, d := range deps("os/exec") {
		osExec[d] = true
	}
	mine := deps("github.com/yettdev/yett/backend/busenv")
	if len(mine) == 0 {
		t.Fatal("go list found no imports")
	}
	for _, d := range mine {
		if !osExec[d] {
			t.Errorf("busenv imports %s, which os/exec does not: busenv may then init after the keyring library", d)
		}
	}
}

// Every package that links a library which autolaunches a session bus
// (from its init, or when it first connects) links this package too, so
// its init has run by then.
func TestLinkedWhereABusIsUsed(t *testing.T) {
	const me = "github.com/yettdev/yett/backend/busenv"
	autolaunchers := []string{"github.com/99designs/keyring", "fyne.io/systray"}
	out, err := exec.Command("go", "list", "-e", "-tags", "desktop,production,webkit2_41", "-json=ImportPath,Deps", "github.com/yettdev/yett/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		for _, a := range autolaunchers {
			if slices.Contains(p.Deps, a) {
				seen++
				if p.ImportPath != me && !slices.Contains(p.Deps, me) {
					t.Errorf("%s links %s but not busenv", p.ImportPath, a)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no package links the keyring library: this test checks nothing")
	}
}
