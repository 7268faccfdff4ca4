package lockwatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/godbus/dbus/v5"
)

// systemBusAddress follows the D-Bus specification's discovery order.
func systemBusAddress(opt string) string {
	if opt != "" {
		return opt
	}
	if a := os.Getenv("DBUS_SYSTEM_BUS_ADDRESS"); a != "" {
		return a
	}
	return "unix:path=/var/run/dbus/system_bus_socket"
}

// sessionBusAddress finds an existing session bus. Unlike godbus's own
// discovery it never runs dbus-launch: starting a private bus nobody else is
// on would report a source that can never fire.
func sessionBusAddress(opt string) (string, error) {
	if opt != "" {
		return opt, nil
	}
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
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

// dial connects and authenticates to a bus whose lifetime is bound to ctx.
// The timer guards against a socket that accepts but never answers, which
// would otherwise hang Start forever.
func dial(ctx context.Context, addr string, timeout time.Duration) (*dbus.Conn, error) {
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

// watchConn hands a subscribed connection to a goroutine that classifies its
// signals until ctx is done or the connection drops.
func (w *Watcher) watchConn(conn *dbus.Conn, ch <-chan *dbus.Signal, sources []Source, classify func(*dbus.Signal) Reason) {
	w.addSources(sources...)
	w.goWatch(func() {
		defer conn.Close()
		defer w.dropSources(sources...)
		for {
			select {
			case <-w.ctx.Done():
				return
			case sig, ok := <-ch:
				if !ok {
					return
				}
				if sig.Sender == "org.freedesktop.DBus" {
					// The daemon's own NameAcquired/NameLost reach
					// every connection regardless of match rules.
					continue
				}
				w.handle(sig.Name+"@"+string(sig.Path), classify(sig))
			}
		}
	})
}

// firstBool is the first argument of a signal if it is a boolean. Anything
// else, however malformed, reads as false: it cannot ask for a lock, and it
// cannot do anything else either.
func firstBool(body []any) bool {
	if len(body) == 0 {
		return false
	}
	b, ok := body[0].(bool)
	return ok && b
}
