// Package busguard stops a D-Bus session bus that a test binary
// autolaunched by accident. 99designs/keyring links godbus, whose session
// bus connection autolaunches a bus through dbus-launch when the process
// starts without DBUS_SESSION_BUS_ADDRESS; such a bus outlives the test run.
// `go test ./...` without the Makefile's environment then leaves daemons
// behind. Tests that need a bus start their own.
package busguard

import (
	"bytes"
	"os"
	"strings"

	"github.com/godbus/dbus/v5"
)

// StopAutolaunched stops the session bus named by DBUS_SESSION_BUS_ADDRESS
// if this process did not start with that variable (so the bus came from
// autolaunch). /proc/self/environ still shows the environment the process
// started with. Call it at the end of TestMain.
func StopAutolaunched() {
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr == "" || startedWithBus() {
		return
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		return
	}
	defer conn.Close()
	var pid uint32
	err = conn.BusObject().Call("org.freedesktop.DBus.GetConnectionUnixProcessID", 0, "org.freedesktop.DBus").Store(&pid)
	if err != nil || pid <= 1 || int(pid) == os.Getpid() {
		return
	}
	if p, err := os.FindProcess(int(pid)); err == nil {
		p.Kill()
	}
}

func startedWithBus() bool {
	env, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return true // cannot tell: leave the bus alone
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if strings.HasPrefix(string(kv), "DBUS_SESSION_BUS_ADDRESS=") {
			return true
		}
	}
	return false
}
