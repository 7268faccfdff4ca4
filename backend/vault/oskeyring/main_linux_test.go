package oskeyring_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"
)

// TestMain stops the session bus that 99designs/keyring's init may have
// autolaunched (through dbus-launch, when this process started without
// DBUS_SESSION_BUS_ADDRESS): it would otherwise outlive every test run.
// /proc/self/environ still shows the environment the process started with,
// so a bus address that is set now but was not then came from autolaunch.
func TestMain(m *testing.M) {
	code := m.Run()
	if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" && !startedWithBus() {
		stopBus(addr)
	}
	os.Exit(code)
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

func stopBus(addr string) {
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
