package lockwatch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

// harness is a watcher under test with what it has done so far.
type harness struct {
	t     *testing.T
	w     *Watcher
	locks chan Reason
	seen  chan string
}

// start runs Start with test hooks; cancel ends it at test cleanup.
func start(t *testing.T, ctx context.Context, opts Options) (*harness, error) {
	t.Helper()
	h := &harness{t: t, locks: make(chan Reason, 64), seen: make(chan string, 64)}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opts.observe = func(event string, fired bool) { h.seen <- event }
	w, err := Start(ctx, func(r Reason) { h.locks <- r }, opts)
	h.w = w
	return h, err
}

// next waits for the watcher to handle n more delivered events and returns
// the locks they caused. onLock runs before observe for the same event, so
// the locks are complete when the last event is seen.
func (h *harness) next(n int) (events []string, locks []Reason) {
	h.t.Helper()
	for range n {
		select {
		case e := <-h.seen:
			events = append(events, e)
		case <-time.After(20 * time.Second):
			h.t.Fatalf("no event delivered; got %v so far", events)
		}
	}
	for {
		select {
		case r := <-h.locks:
			locks = append(locks, r)
		default:
			return events, locks
		}
	}
}

// twoBuses starts a session bus and a system bus with a fake logind.
func twoBuses(t *testing.T, noSession bool) (session *bus, system *bus, logind *fakeLogind) {
	session = startSessionBus(t, t.TempDir())
	system = startSystemBus(t)
	logind = startFakeLogind(t, system.addr, noSession)
	return session, system, logind
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

func TestSourcesWithBothBuses(t *testing.T) {
	session, system, _ := twoBuses(t, false)
	h, err := start(t, testContext(t), Options{SystemBusAddress: system.addr, SessionBusAddress: session.addr})
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{
		"logind:PrepareForSleep", "logind:Session.Lock", "logind:Session.LockedHint",
		"org.freedesktop.ScreenSaver:ActiveChanged", "org.gnome.ScreenSaver:ActiveChanged",
		"org.mate.ScreenSaver:ActiveChanged", "org.cinnamon.ScreenSaver:ActiveChanged",
		"org.xfce.ScreenSaver:ActiveChanged",
	}
	if got := h.w.Sources(); !slices.Equal(got, want) {
		t.Fatalf("Sources() = %v, want %v", got, want)
	}
}

func TestLogsSources(t *testing.T) {
	session := startSessionBus(t, t.TempDir())
	var buf syncbuf.Buffer
	_, err := start(t, testContext(t), Options{
		SystemBusAddress: "unix:path=/nonexistent/bus", SessionBusAddress: session.addr,
		Logger: slog.New(slog.NewTextHandler(&buf, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	for _, want := range []string{
		`msg="lockwatch: source unavailable" err="system bus: dial unix /nonexistent/bus`,
		`msg="lockwatch: auto-lock sources" sources="[org.freedesktop.ScreenSaver:ActiveChanged org.gnome.ScreenSaver:ActiveChanged`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestScreenSaverSignals(t *testing.T) {
	session := startSessionBus(t, t.TempDir())
	h, err := start(t, testContext(t), Options{SystemBusAddress: "unix:path=/nonexistent/bus", SessionBusAddress: session.addr})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, member string
		args               []string
		want               []Reason
	}{
		{"freedesktop locks", "/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", []string{"boolean:true"}, []Reason{ScreenLocked}},
		{"freedesktop other path", "/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", []string{"boolean:true"}, []Reason{ScreenLocked}},
		{"gnome locks", "/org/gnome/ScreenSaver", "org.gnome.ScreenSaver.ActiveChanged", []string{"boolean:true"}, []Reason{ScreenLocked}},
		{"mate locks", "/org/mate/ScreenSaver", "org.mate.ScreenSaver.ActiveChanged", []string{"boolean:true"}, []Reason{ScreenLocked}},
		{"cinnamon locks", "/org/cinnamon/ScreenSaver", "org.cinnamon.ScreenSaver.ActiveChanged", []string{"boolean:true"}, []Reason{ScreenLocked}},
		{"xfce locks", "/org/xfce/ScreenSaver", "org.xfce.ScreenSaver.ActiveChanged", []string{"boolean:true"}, []Reason{ScreenLocked}},
		{"freedesktop deactivates", "/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", []string{"boolean:false"}, nil},
		{"gnome deactivates", "/org/gnome/ScreenSaver", "org.gnome.ScreenSaver.ActiveChanged", []string{"boolean:false"}, nil},
		{"string not bool", "/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", []string{"string:true"}, nil},
		{"int not bool", "/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", []string{"int32:1"}, nil},
		{"no argument", "/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbusSend(t, session.addr, tt.path, tt.member, tt.args...)
			events, locks := h.next(1)
			if want := tt.member + "@" + tt.path; events[0] != want {
				t.Fatalf("event %q, want %q", events[0], want)
			}
			if !slices.Equal(locks, tt.want) {
				t.Fatalf("locks %v, want %v", locks, tt.want)
			}
		})
	}
}

func TestLogindSignals(t *testing.T) {
	_, system, logind := twoBuses(t, false)
	h, err := start(t, testContext(t), Options{SystemBusAddress: system.addr, SessionBusAddress: "unix:path=/nonexistent/bus"})
	if err != nil {
		t.Fatal(err)
	}
	other := "/org/freedesktop/login1/session/_99"
	// Each case is followed by "sleep false", which is delivered and never
	// locks: once it is seen, everything sent before it has been handled,
	// including signals the bus never delivered to us.
	tests := []struct {
		name      string
		command   string
		delivered int
		want      []Reason
	}{
		{"going to sleep", "sleep true", 1, []Reason{Sleep}},
		{"waking up", "sleep false", 1, nil},
		{"our session locks", "lock " + string(ourSession), 1, []Reason{ScreenLocked}},
		{"our session unlocks", "unlock " + string(ourSession), 0, nil},
		{"other session locks", "lock " + other, 0, nil},
		{"locked hint set", "hint " + string(ourSession) + " true", 1, []Reason{ScreenLocked}},
		{"locked hint cleared", "hint " + string(ourSession) + " false", 1, nil},
		{"other session hint", "hint " + other + " true", 0, nil},
		{"sleep forged by non-owner", "forge-sleep true", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logind.do(tt.command)
			logind.do("sleep false")
			events, locks := h.next(tt.delivered + 1)
			if last := events[len(events)-1]; last != login1Manager+".PrepareForSleep@"+string(login1Path) {
				t.Fatalf("events %v: barrier not last", events)
			}
			if !slices.Equal(locks, tt.want) {
				t.Fatalf("locks %v, want %v (events %v)", locks, tt.want, events)
			}
		})
	}
}

func TestLogindWithoutSession(t *testing.T) {
	_, system, logind := twoBuses(t, true)
	h, err := start(t, testContext(t), Options{SystemBusAddress: system.addr, SessionBusAddress: "unix:path=/nonexistent/bus"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.w.Sources(), []Source{"logind:PrepareForSleep"}; !slices.Equal(got, want) {
		t.Fatalf("Sources() = %v, want %v", got, want)
	}
	logind.do("sleep true")
	if _, locks := h.next(1); !slices.Equal(locks, []Reason{Sleep}) {
		t.Fatalf("locks %v", locks)
	}
}

func TestNothingToWatch(t *testing.T) {
	system := startSystemBus(t) // a bus without logind counts as nothing
	dir := t.TempDir()
	hang := hangingSocket(t, filepath.Join(dir, "hang"))
	tests := []struct {
		name          string
		opts          Options
		wantInMessage string
	}{
		{"no buses", Options{SystemBusAddress: "unix:path=/nonexistent/bus", SessionBusAddress: "unix:path=/nonexistent/bus"}, "no such file"},
		{"system bus without logind", Options{SystemBusAddress: system.addr, SessionBusAddress: "unix:path=/nonexistent/bus"}, "logind is not running"},
		{"unparseable addresses", Options{SystemBusAddress: "nonsense", SessionBusAddress: "tcp:"}, "system bus"},
		{"bus that never answers", Options{SystemBusAddress: hang, SessionBusAddress: hang, ConnectTimeout: 200 * time.Millisecond}, "no answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			h, err := start(t, testContext(t), tt.opts)
			if !errors.Is(err, ErrNoSource) || h.w != nil {
				t.Fatalf("Start = %v, %v; want ErrNoSource", h.w, err)
			}
			if !strings.Contains(err.Error(), tt.wantInMessage) {
				t.Fatalf("error %q does not say %q", err, tt.wantInMessage)
			}
			waitGoroutines(t, before)
			tt.opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			err = Watch(testContext(t), func(Reason) {}, tt.opts)
			if !errors.Is(err, ErrNoSource) {
				t.Fatalf("Watch = %v; want ErrNoSource", err)
			}
		})
	}
}

// hangingSocket accepts connections and never says a word.
func hangingSocket(t *testing.T, path string) string {
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return "unix:path=" + path
}

func TestDefaultDiscovery(t *testing.T) {
	dir := t.TempDir()
	startSessionBus(t, dir)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", dir)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	h, err := start(t, testContext(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.w.Sources()); n != len(screenSavers) {
		t.Fatalf("Sources() = %v", h.w.Sources())
	}

	// With neither variable set there is no session bus, and none is
	// launched for us.
	t.Setenv("XDG_RUNTIME_DIR", "")
	_, err = start(t, testContext(t), Options{})
	if !errors.Is(err, ErrNoSource) || !strings.Contains(err.Error(), "no session bus") {
		t.Fatalf("Start = %v", err)
	}
}

func TestCancelStopsWithoutLeaks(t *testing.T) {
	session, system, logind := twoBuses(t, false)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := start(t, ctx, Options{SystemBusAddress: system.addr, SessionBusAddress: session.addr})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	logind.do("sleep true")
	h.next(1)
	cancel()
	done := make(chan struct{})
	go func() { h.w.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Wait did not return after cancel")
	}
	// Nothing reaches onLock once Wait has returned.
	logind.do("sleep true")
	dbusSend(t, session.addr, "/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", "boolean:true")
	if len(h.locks) != 0 || len(h.seen) != 0 {
		t.Fatalf("events after Wait: %d locks, %d seen", len(h.locks), len(h.seen))
	}
	waitGoroutines(t, before)
}

func TestWatchBlocksUntilCancel(t *testing.T) {
	session := startSessionBus(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	locks := make(chan Reason, 64)
	ret := make(chan error, 1)
	go func() {
		ret <- Watch(ctx, func(r Reason) { locks <- r }, Options{
			SystemBusAddress: "unix:path=/nonexistent/bus", SessionBusAddress: session.addr,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
	}()
	// Watch subscribes in the background: signal until it answers, which
	// proves it is running rather than returned.
	deadline := time.Now().Add(20 * time.Second)
	for len(locks) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Watch never reported a lock")
		}
		select {
		case err := <-ret:
			t.Fatalf("Watch returned early: %v", err)
		default:
		}
		dbusSend(t, session.addr, "/ScreenSaver", "org.freedesktop.ScreenSaver.ActiveChanged", "boolean:true")
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-ret:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Watch did not return after cancel")
	}
}

func TestStartWithCancelledContext(t *testing.T) {
	session := startSessionBus(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := runtime.NumGoroutine()
	opts := Options{SystemBusAddress: "unix:path=/nonexistent/bus", SessionBusAddress: session.addr}
	if _, err := start(t, ctx, opts); !errors.Is(err, context.Canceled) || errors.Is(err, ErrNoSource) {
		t.Fatalf("Start = %v; want context.Canceled", err)
	}
	if err := Watch(ctx, func(Reason) {}, opts); err != nil {
		t.Fatalf("Watch = %v; want nil", err)
	}
	waitGoroutines(t, before)
}

func TestLostBusDropsSources(t *testing.T) {
	session, system, logind := twoBuses(t, false)
	h, err := start(t, testContext(t), Options{SystemBusAddress: system.addr, SessionBusAddress: session.addr})
	if err != nil {
		t.Fatal(err)
	}
	session.stop()
	deadline := time.Now().Add(20 * time.Second)
	for len(h.w.Sources()) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("Sources() = %v after the session bus died", h.w.Sources())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The system bus is still watched.
	logind.do("sleep true")
	if _, locks := h.next(1); !slices.Equal(locks, []Reason{Sleep}) {
		t.Fatalf("locks %v", locks)
	}
}

// waitGoroutines waits, within a generous bound, for the goroutine count
// to fall back to before: godbus closes its readers asynchronously.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d before, %d now\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
