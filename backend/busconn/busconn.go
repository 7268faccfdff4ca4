// Package busconn finds and dials the D-Bus buses Yett listens on (the
// session bus for notifications and screen locks, the system bus for
// logind) without ever starting one: a private bus nobody else is on has no
// notification server the person sees and no lock that can fire.
package busconn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// SystemAddress follows the D-Bus specification's discovery order for the
// system bus; opt, when set, wins.
func SystemAddress(opt string) string {
	if opt != "" {
		return opt
	}
	if a := os.Getenv("DBUS_SYSTEM_BUS_ADDRESS"); a != "" {
		return a
	}
	return "unix:path=/var/run/dbus/system_bus_socket"
}

// SessionAddress finds an existing session bus; opt, when set, wins. Unlike
// godbus's own discovery it never autolaunches one, and a bus disabled with
// DBUS_SESSION_BUS_ADDRESS=disabled: is reported as such.
func SessionAddress(opt string) (string, error) {
	if opt != "" {
		return opt, nil
	}
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		if strings.HasPrefix(a, "disabled:") {
			return "", errors.New("the session bus is disabled (DBUS_SESSION_BUS_ADDRESS=disabled:)")
		}
		return a, nil
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		p := filepath.Join(dir, "bus")
		if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "unix:path=" + dbus.EscapeBusAddressValue(p), nil
		}
	}
	return "", errors.New("no session bus (DBUS_SESSION_BUS_ADDRESS unset, no $XDG_RUNTIME_DIR/bus)")
}

// Dial connects and authenticates to the bus at addr, the connection's
// lifetime bound to ctx. The timer guards against a socket that accepts and
// never answers, which would otherwise hang the caller for ever.
func Dial(ctx context.Context, addr string, timeout time.Duration) (*dbus.Conn, error) {
	conn, err := dbus.Dial(addr, dbus.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	timer := time.AfterFunc(timeout, func() { conn.Close() })
	err = conn.Auth(nil)
	if err == nil {
		err = conn.Hello()
	}
	if !timer.Stop() {
		conn.Close()
		return nil, fmt.Errorf("no answer within %v", timeout)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}
