package busconn

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSessionAddressNeverStartsABus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if a, err := SessionAddress(""); err == nil {
		t.Fatalf("no bus anywhere gave %q", a)
	}
	if a, _ := SessionAddress("unix:path=/x"); a != "unix:path=/x" {
		t.Fatalf("the option lost to discovery: %q", a)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	if _, err := SessionAddress(""); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("a disabled bus: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "autolaunch:")
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", dir)
	l, err := net.Listen("unix", filepath.Join(dir, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if a, err := SessionAddress(""); err != nil || !strings.Contains(a, filepath.Join(dir, "bus")) {
		t.Fatalf("the runtime directory's bus: %q %v", a, err)
	}
}

func TestSystemAddress(t *testing.T) {
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "")
	if a := SystemAddress(""); a != "unix:path=/var/run/dbus/system_bus_socket" {
		t.Fatalf("default %q", a)
	}
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/y")
	if a := SystemAddress(""); a != "unix:path=/y" {
		t.Fatalf("environment %q", a)
	}
}

// A socket that accepts and never answers must not hang the caller.
func TestDialGivesUpOnASilentBus(t *testing.T) {
	p := filepath.Join(t.TempDir(), "silent")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	_, err = Dial(context.Background(), "unix:path="+p, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("err %v, want no answer", err)
	}
}
