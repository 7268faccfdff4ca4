// Package busenv keeps Yett from starting a D-Bus session bus. Importing it
// (for its init) pins DBUS_SESSION_BUS_ADDRESS, before any other package's
// init runs, to the session bus that exists, or to "disabled:" when there
// is none.
//
// # Why
//
// Left unset, the variable makes libraries autolaunch a bus: godbus (both
// the v5 module and the old one 99designs/keyring links, which connects from
// its package init) runs dbus-launch, and GLib and libdbus (GTK, WebKit, the
// accessibility bridge) run `dbus-launch --autolaunch` when there is an X
// display. That daemon outlives the process: every start of the desktop
// app outside a session left one behind. A bus nobody else is on is worth
// nothing to Yett anyway: no notification server the person sees, no tray,
// no screen lock that can fire (backend/busconn never starts one either).
// "disabled:" is an address no library can connect to, so each reports no
// bus and none launches one; child processes inherit it and launch none.
//
// # Init order
//
// Go initializes packages in import-path order among those whose imports
// are initialized. This package imports only what os/exec imports, so it is
// ready whenever os/exec is, and its path sorts first: it runs before
// os/exec, hence before godbus and anything built on it.
// TestStartWithoutABusLeavesNoBus (backend/vault/oskeyring) checks the
// order and its effect in a binary that links the keyring library,
// TestImportsStayWithinOSExec keeps the argument true, and
// TestLinkedWhereABusIsUsed that every package linking a library that
// autolaunches also links this one.
package busenv

import (
	"path/filepath"
	"strings"
)

// Variable is the environment variable libraries read the session bus
// address from.
const Variable = "DBUS_SESSION_BUS_ADDRESS"

// Disabled is the address Yett pins when there is no session bus.
const Disabled = "disabled:"

// Pinned decides what the variable should hold: the address set, less any
// autolaunch: entry; else the per-user bus socket in runtimeDir when
// isSocket says it is one; else Disabled. change is false when the
// variable is right as it is.
func Pinned(current, runtimeDir string, isSocket func(path string) bool) (value string, change bool) {
	var kept []string
	for _, a := range strings.Split(current, ";") {
		if a != "" && !strings.HasPrefix(a, "autolaunch:") {
			kept = append(kept, a)
		}
	}
	if len(kept) > 0 {
		value = strings.Join(kept, ";")
		return value, value != current
	}
	if runtimeDir != "" {
		if p := filepath.Join(runtimeDir, "bus"); isSocket(p) {
			return "unix:path=" + escapeValue(p), true
		}
	}
	return Disabled, true
}

// escapeValue escapes a D-Bus address value: every byte outside the
// optionally-escaped set becomes %xx.
func escapeValue(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_/.\\*", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}
