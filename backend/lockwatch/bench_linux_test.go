package lockwatch

import (
	"io"
	"log/slog"
	"testing"

	"github.com/godbus/dbus/v5"
)

// BenchmarkSignalToLock measures one ActiveChanged(true) from emit to
// onLock over a real session bus; BenchmarkBusRoundTrip is the baseline on
// the same kind of bus (a Ping to the daemon), so the ratio says what the
// watcher adds on top of the bus itself.
func BenchmarkSignalToLock(b *testing.B) {
	session := startSessionBus(b, b.TempDir())
	locks := make(chan Reason, 1)
	w, err := Start(b.Context(), func(r Reason) { locks <- r }, Options{
		SystemBusAddress: "unix:path=/nonexistent/bus", SessionBusAddress: session.addr,
		Logger: discardLogger(),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("sources: %v", w.Sources())
	emitter, err := dbus.Connect(session.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer emitter.Close()
	for b.Loop() {
		if err := emitter.Emit("/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", true); err != nil {
			b.Fatal(err)
		}
		<-locks
	}
}

func BenchmarkBusRoundTrip(b *testing.B) {
	session := startSessionBus(b, b.TempDir())
	conn, err := dbus.Connect(session.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	for b.Loop() {
		if err := conn.BusObject().Call("org.freedesktop.DBus.Peer.Ping", 0).Err; err != nil {
			b.Fatal(err)
		}
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
