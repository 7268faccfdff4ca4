//go:build linux

package notify

import (
	"sync"
	"testing"

	"github.com/godbus/dbus/v5"
)

// fakeServer owns org.freedesktop.Notifications on a test bus and records
// what it is asked, so a test can check the calls and emit signals as the
// owner. It is a stand-in for the unit tests; dunst_linux_test.go runs the
// real daemon.
type fakeServer struct {
	t       *testing.T
	conn    *dbus.Conn
	actions bool
	markup  bool

	mu     sync.Mutex
	next   uint32
	shown  map[uint32]fakeNote
	closed []uint32
}

type fakeNote struct {
	AppName, Icon, Summary, Body string
	Replaces                     uint32
	Actions                      []string
	Hints                        map[string]dbus.Variant
	Timeout                      int32
}

func startFakeServer(t *testing.T, addr string, actions bool) *fakeServer {
	return startFakeServerWith(t, addr, actions, false)
}

func startFakeServerWith(t *testing.T, addr string, actions, markup bool) *fakeServer {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{t: t, conn: conn, actions: actions, markup: markup, next: 1, shown: map[uint32]fakeNote{}}
	if err := conn.Export(fakeMethods{s}, fdoPath, fdoInterface); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(fdoName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v %v", fdoName, reply, err)
	}
	t.Cleanup(func() { conn.Close() })
	return s
}

type fakeMethods struct{ s *fakeServer }

func (m fakeMethods) GetCapabilities() ([]string, *dbus.Error) {
	caps := []string{"body"}
	if m.s.actions {
		caps = append(caps, "actions")
	}
	if m.s.markup {
		caps = append(caps, "body-markup")
	}
	return caps, nil
}

func (m fakeMethods) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "fake", "yett tests", "1.0", "1.2", nil
}

func (m fakeMethods) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	id := replaces
	if id == 0 || s.shown[id].Summary == "" {
		id = s.next
		s.next++
	}
	s.shown[id] = fakeNote{AppName: app, Icon: icon, Summary: summary, Body: body, Replaces: replaces, Actions: actions, Hints: hints, Timeout: timeout}
	return id, nil
}

func (m fakeMethods) CloseNotification(id uint32) *dbus.Error {
	s := m.s
	s.mu.Lock()
	delete(s.shown, id)
	s.closed = append(s.closed, id)
	s.mu.Unlock()
	s.conn.Emit(fdoPath, fdoInterface+".NotificationClosed", id, uint32(3))
	return nil
}

// only returns the one notification shown, failing otherwise.
func (s *fakeServer) only() (uint32, fakeNote) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.shown) != 1 {
		s.t.Fatalf("%d notifications shown, want 1", len(s.shown))
	}
	for id, n := range s.shown {
		return id, n
	}
	return 0, fakeNote{}
}

func (s *fakeServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.shown)
}

// emitAction sends ActionInvoked as the owner would, and waits until the
// bus routed it (a round trip on the same connection).
func (s *fakeServer) emitAction(id uint32, key string) {
	s.t.Helper()
	emitFrom(s.t, s.conn, id, key)
}

func emitFrom(t *testing.T, conn *dbus.Conn, id uint32, key string) {
	t.Helper()
	if err := conn.Emit(fdoPath, fdoInterface+".ActionInvoked", id, key); err != nil {
		t.Fatal(err)
	}
	var busID string
	if err := conn.BusObject().Call(busName+".GetId", 0).Store(&busID); err != nil {
		t.Fatal(err)
	}
}

// nonceOf is the nonce in a notification's approve action.
func nonceOf(t *testing.T, n fakeNote) string {
	t.Helper()
	for _, a := range n.Actions {
		if len(a) > len("approve-") && a[:len("approve-")] == "approve-" {
			return a[len("approve-"):]
		}
	}
	t.Fatalf("no approve action in %q", n.Actions)
	return ""
}
