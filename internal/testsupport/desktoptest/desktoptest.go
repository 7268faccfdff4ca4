//go:build linux

// Package desktoptest runs a private Linux desktop for tests: a session bus
// under dbus-run-session, an X server (Xvfb) and a real notification daemon
// (dunst), each started by the test and stopped when it ends. Debian
// packages: dbus-daemon (dbus-run-session), xvfb, dunst, libnotify-bin;
// build/scripts/deps.sh installs them.
//
// dunst shows a notification's actions in its context menu, through the
// program its dmenu setting names. Dunst.Invoke points that at a script
// that picks the wanted action, then opens the menu with dunstctl: the
// daemon itself invokes the action, exactly as when a person picks it.
package desktoptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// SessionBus starts a session bus with dbus-run-session and returns its
// address. The bus lives until the test ends.
func SessionBus(t testing.TB) string {
	t.Helper()
	// dbus-run-session runs its child on a new bus and stops the bus when
	// the child exits: the child prints the address and waits for its
	// stdin to close.
	cmd := exec.Command("dbus-run-session", "--", "sh", "-c", `printf '%s\n' "$DBUS_SESSION_BUS_ADDRESS"; exec cat >/dev/null`)
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS=")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("dbus-run-session (Debian package dbus-daemon): %v", err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	addr := readLine(t, bufio.NewReader(out), "dbus-run-session")
	go io.Copy(io.Discard, out)
	if addr == "" {
		t.Fatal("dbus-run-session printed no address")
	}
	return addr
}

// BareSessionBus starts a session bus on which no service can be
// activated (no notification daemon, no keyring starts by itself when
// named) and returns its address. The bus lives until the test ends.
func BareSessionBus(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=`+dir+`</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("dbus-daemon (Debian package dbus-daemon): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := readLine(t, bufio.NewReader(out), "dbus-daemon")
	if addr == "" {
		t.Fatal("dbus-daemon printed no address")
	}
	return addr
}

// Display starts Xvfb on a display it picks and returns its name (":N").
func Display(t testing.TB) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1024x768x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatalf("Xvfb (Debian package xvfb): %v", err)
	}
	w.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	n := readLine(t, bufio.NewReader(r), "Xvfb -displayfd")
	r.Close()
	return ":" + n
}

func readLine(t testing.TB, r *bufio.Reader, what string) string {
	t.Helper()
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		l, err := r.ReadString('\n')
		ch <- result{strings.TrimSpace(l), err}
	}()
	select {
	case res := <-ch:
		if res.err != nil && res.line == "" {
			t.Fatalf("%s: %v", what, res.err)
		}
		return res.line
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer", what)
		return ""
	}
}

// Dunst is a running dunst on a private display and bus.
type Dunst struct {
	t    testing.TB
	env  []string
	dir  string
	argv []string
	cmd  *exec.Cmd // nil when another process started it
	pick string    // file the menu script reads the wanted entry from
	menu string    // file the menu script copies the offered entries to
}

// StartDunst runs dunst on display and bus, owning
// org.freedesktop.Notifications there, and waits until it does.
func StartDunst(t testing.TB, display, bus string) *Dunst {
	t.Helper()
	d := NewDunst(t, display, bus)
	d.cmd = exec.Command(d.argv[0], d.argv[1:]...)
	d.cmd.Env = d.env
	log, err := os.Create(filepath.Join(d.dir, "dunst.log"))
	if err != nil {
		t.Fatal(err)
	}
	d.cmd.Stdout, d.cmd.Stderr = log, log
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("dunst (Debian package dunst): %v", err)
	}
	t.Cleanup(func() {
		d.cmd.Process.Kill()
		d.cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("dunst log:\n%s", b)
		}
	})
	d.WaitReady()
	return d
}

// NewDunst prepares a dunst for display and bus (its configuration and
// menu script) without starting it: Command says how, for a test whose
// agent starts it as its own child; WaitReady waits for it.
func NewDunst(t testing.TB, display, bus string) *Dunst {
	t.Helper()
	dir := t.TempDir()
	d := &Dunst{t: t, dir: dir, pick: filepath.Join(dir, "pick"), menu: filepath.Join(dir, "menu")}
	script := filepath.Join(dir, "dmenu.sh")
	// The menu gets one line per action ("#Approve (summary) [id,key]") on
	// stdin and answers with the chosen line. It copies what it was offered
	// to d.menu last, so the test knows the menu is about to close.
	if err := os.WriteFile(script, fmt.Appendf(nil, "#!/bin/sh\ncat >%q.in\nout=$(grep -F -m1 -e \"$(cat %q)\" %q.in)\nmv %q.in %q\nprintf '%%s\\n' \"$out\"\n",
		d.menu, d.pick, d.menu, d.menu, d.menu), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "dunstrc")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "[global]\ndmenu = %s\nshow_indicators = yes\n", script), 0o600); err != nil {
		t.Fatal(err)
	}
	d.env = append(os.Environ(), "DISPLAY="+display, "DBUS_SESSION_BUS_ADDRESS="+bus, "XDG_CONFIG_HOME="+dir)
	d.argv = []string{"dunst", "-config", cfg}
	return d
}

// Command is the command line and environment that start this dunst.
func (d *Dunst) Command() (argv, env []string) { return d.argv, d.env }

// WaitReady waits until dunst answers dunstctl on its bus.
func (d *Dunst) WaitReady() {
	d.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := d.ctl("count", "displayed"); err == nil {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatal("dunst did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PID is the pid of the dunst StartDunst started.
func (d *Dunst) PID() int { return d.cmd.Process.Pid }

func (d *Dunst) ctl(args ...string) (string, error) {
	cmd := exec.Command("dunstctl", args...)
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Displayed is how many notifications dunst shows now.
func (d *Dunst) Displayed() int {
	d.t.Helper()
	out, err := d.ctl("count", "displayed")
	if err != nil {
		d.t.Fatalf("dunstctl count: %v %s", err, out)
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		d.t.Fatalf("dunstctl count said %q", out)
	}
	return n
}

// Invoke picks the action labelled label ("Approve", "Deny", "Open Yett")
// of the newest notification through dunst's own context menu, and
// returns the menu dunst offered.
func (d *Dunst) Invoke(label string) string {
	d.t.Helper()
	if err := os.WriteFile(d.pick, []byte("#"+label+" "), 0o600); err != nil {
		d.t.Fatal(err)
	}
	os.Remove(d.menu)
	// dunst refuses to open its menu while the previous one is still
	// closing: ask again until it opens.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if out, err := d.ctl("context"); err != nil {
			d.t.Fatalf("dunstctl context: %v %s", err, out)
		}
		for wait := time.Now().Add(time.Second); time.Now().Before(wait); time.Sleep(20 * time.Millisecond) {
			if b, err := os.ReadFile(d.menu); err == nil {
				time.Sleep(100 * time.Millisecond) // the script's last line: dunst reads its answer
				return string(b)
			}
		}
	}
	d.t.Fatal("dunst never opened its menu")
	return ""
}

// Menu returns the actions dunst offers for its notifications ("#Approve
// (summary) [id,key]" a line) without picking any.
func (d *Dunst) Menu() string {
	d.t.Helper()
	return d.Invoke("no such action 7f3a")
}

// Notification is one notification in dunst's history.
type Notification struct {
	ID      int
	Summary string
	Body    string
	AppName string
}

// History lists the notifications dunst closed (newest first).
func (d *Dunst) History() []Notification {
	d.t.Helper()
	out, err := d.ctl("history")
	if err != nil {
		d.t.Fatalf("dunstctl history: %v %s", err, out)
	}
	var h struct {
		Data [][]map[string]struct {
			Data any `json:"data"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		d.t.Fatalf("dunstctl history: %v", err)
	}
	var list []Notification
	for _, group := range h.Data {
		for _, n := range group {
			str := func(k string) string { s, _ := n[k].Data.(string); return s }
			id, _ := n["id"].Data.(float64)
			list = append(list, Notification{ID: int(id), Summary: str("summary"), Body: str("body"), AppName: str("appname")})
		}
	}
	return list
}

// Stop ends dunst, as any process of the user may (SIGTERM), and waits.
func (d *Dunst) Stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Wait()
}

// Rogue is what an agent can put on the session bus: its own connection
// that claims org.freedesktop.Notifications (at once when the name is free,
// or as soon as its owner goes away), answers as a notification server with
// actions, keeps what it is sent, and emits ActionInvoked as the owner.
type Rogue struct {
	t    testing.TB
	conn *dbus.Conn

	mu    sync.Mutex
	next  uint32
	shown []RogueNote
}

// RogueNote is one Notify call the rogue server received.
type RogueNote struct {
	ID      uint32
	Summary string
	Actions []string
}

// StartRogue connects to bus and queues for the notification name.
func StartRogue(t testing.TB, bus string) *Rogue {
	t.Helper()
	conn, err := dbus.Connect(bus)
	if err != nil {
		t.Fatal(err)
	}
	r := &Rogue{t: t, conn: conn, next: 1}
	if err := conn.Export(rogueMethods{r}, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.RequestName("org.freedesktop.Notifications", 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return r
}

// Name is the rogue's unique bus name.
func (r *Rogue) Name() string { return r.conn.Names()[0] }

// Owns reports whether the rogue owns the notification name now.
func (r *Rogue) Owns() bool {
	var owner string
	if err := r.conn.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, "org.freedesktop.Notifications").Store(&owner); err != nil {
		return false
	}
	return owner == r.conn.Names()[0]
}

// Shown is every notification the rogue was asked to show.
func (r *Rogue) Shown() []RogueNote {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RogueNote(nil), r.shown...)
}

// Press emits ActionInvoked for the newest notification's action whose key
// starts with prefix ("approve-"), as the name's owner, and returns the key
// ("" when no notification offers one).
func (r *Rogue) Press(prefix string) string {
	r.t.Helper()
	notes := r.Shown()
	for i := len(notes) - 1; i >= 0; i-- {
		for j := 0; j+1 < len(notes[i].Actions); j += 2 {
			if key := notes[i].Actions[j]; strings.HasPrefix(key, prefix) {
				if err := r.conn.Emit("/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked", notes[i].ID, key); err != nil {
					r.t.Fatal(err)
				}
				return key
			}
		}
	}
	return ""
}

type rogueMethods struct{ r *Rogue }

func (m rogueMethods) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"actions", "body"}, nil
}

func (m rogueMethods) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "dunst", "dunst-project", "1.9.0", "1.2", nil
}

func (m rogueMethods) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	id := replaces
	if id == 0 {
		id = m.r.next
		m.r.next++
	}
	m.r.shown = append(m.r.shown, RogueNote{ID: id, Summary: summary, Actions: append([]string(nil), actions...)})
	return id, nil
}

func (m rogueMethods) CloseNotification(uint32) *dbus.Error { return nil }
