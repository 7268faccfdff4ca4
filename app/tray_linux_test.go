package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/desktoptest"
)

// The real tray icon (fyne.io/systray) registers with a
// StatusNotifierWatcher on a private session bus, and another connection
// on that bus, as an agent would, sends dbusmenu clicks for every item:
// the cards' entries, Open, the header, a hidden slot, an item id that
// does not exist, Lock now and, once locked, everything again. Each click
// shows the window or a card, or locks: no card is ever answered, no
// session starts, and the vault, once locked, stays locked. Quit quits.
// Yett runs in a child process (this test binary again): the library
// keeps one tray per process.
func TestForgedTrayClicksNeverAnswerOrUnlock(t *testing.T) {
	if dir := os.Getenv(trayChildEnv); dir != "" {
		trayChild(t, dir)
		return
	}
	addr := desktoptest.BareSessionBus(t)
	watcher := startTrayWatcher(t, addr)
	base, err := os.MkdirTemp("", "yt") // short: the socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	child := startTrayChild(t, addr, base)
	ready := child.state(t)
	if len(ready.Pending) != 2 || ready.Locked {
		t.Fatalf("the child's starting state: %+v", ready)
	}

	item := watcher.waitRegistered(t)
	agent, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	menu := agent.Object(item, "/StatusNotifierItem/menu")
	items := waitMenu(t, menu, "2 approvals waiting")
	var tip struct {
		Name  string
		Icons []struct {
			W, H int32
			Pix  []byte
		}
		Title, Text string
	}
	sni := agent.Object(item, "/StatusNotifierItem")
	if err := sni.StoreProperty("org.kde.StatusNotifierItem.ToolTip", &tip); err != nil || tip.Title != "Yett: 2 approvals waiting" {
		t.Errorf("tooltip %+v: %v", tip, err)
	}
	var pixmaps []struct {
		W, H int32
		Pix  []byte
	}
	var title string
	if err := sni.StoreProperty("org.kde.StatusNotifierItem.IconPixmap", &pixmaps); err != nil || len(pixmaps) != 1 ||
		pixmaps[0].W != 64 || pixmaps[0].H != 64 || len(pixmaps[0].Pix) != 64*64*4 {
		t.Errorf("the icon: %d pixmaps, %v", len(pixmaps), err)
	}
	if err := sni.StoreProperty("org.kde.StatusNotifierItem.Title", &title); err != nil || title != "Yett" {
		t.Errorf("title %q: %v", title, err)
	}
	// The agent named its program: the entry shows it escaped and clipped,
	// its '_' doubled so the menu shows it instead of taking it as the
	// access key.
	evil := items.find(t, "claude__\\u202eevil\\u000aApprove a…: asks to use b.example")
	sh, err := filepath.EvalSymlinks("/bin/sh") // the card names the file that runs: dash on Debian
	if err != nil {
		t.Fatal(err)
	}
	plain := items.find(t, menuText(filepath.Base(sh))+": asks to use a.example")
	open, lock, quit := items.find(t, "Open Yett"), items.find(t, "Lock the vault now"), items.find(t, "Quit Yett")
	header := items.find(t, "2 approvals waiting")
	for id, it := range items.byID {
		if clickable := id != header && it.visible; it.enabled != clickable && it.visible {
			t.Errorf("item %+v: enabled %v, want %v", it, it.enabled, clickable)
		}
	}
	more := items.hidden(t)

	clicks := 0
	click := func(id int32, wantRaised string) trayChildState {
		t.Helper()
		if err := menu.Call("com.canonical.dbusmenu.Event", 0, id, "clicked", dbus.MakeVariant(""), uint32(0)).Err; err != nil {
			t.Fatalf("Event(%d): %v", id, err)
		}
		clicks++
		child.waitClicks(t, clicks)
		st := child.state(t)
		if st.Raised != wantRaised || st.Approved != 0 || st.Sessions != 0 {
			t.Fatalf("after a click on item %d: %+v, want the window raised for %q and nothing approved", id, st, wantRaised)
		}
		return st
	}
	cardOf := map[int32]string{}
	for i, label := range ready.Labels {
		if strings.HasPrefix(label, "claude") {
			cardOf[evil] = ready.Pending[i]
		} else {
			cardOf[plain] = ready.Pending[i]
		}
	}
	for _, id := range []int32{evil, header, plain, open, more} {
		want := map[int32]string{evil: cardOf[evil], plain: cardOf[plain], open: "(oldest)"}[id]
		if st := click(id, want); st.Locked || len(st.Pending) != 2 {
			t.Fatalf("after a click on item %d: %+v", id, st)
		}
	}
	// No such item: the library drops it; the next click is the only one
	// counted.
	if err := menu.Call("com.canonical.dbusmenu.Event", 0, int32(9999), "clicked", dbus.MakeVariant(""), uint32(0)).Err; err != nil {
		t.Fatal(err)
	}
	// EventGroup is the other way a host reports clicks.
	if err := menu.Call("com.canonical.dbusmenu.EventGroup", 0, []struct {
		ID        int32
		Event     string
		Data      dbus.Variant
		Timestamp uint32
	}{{evil, "clicked", dbus.MakeVariant(""), 0}}).Err; err != nil {
		t.Fatal(err)
	}
	clicks++
	child.waitClicks(t, clicks)
	if st := child.state(t); st.Raised != cardOf[evil] || st.Approved != 0 {
		t.Fatalf("after EventGroup: %+v", st)
	}

	if st := click(lock, ""); !st.Locked {
		t.Fatalf("after Lock now: %+v, want locked", st)
	}
	// The broker withdraws the cards when it hears of the lock.
	waitFor(t, func() bool {
		st := child.state(t)
		if st.Approved != 0 || st.Sessions != 0 || !st.Locked {
			t.Fatalf("after Lock now: %+v", st)
		}
		return len(st.Pending) == 0
	})
	locked := waitMenu(t, menu, "No approval waiting")
	if l := locked.byID[lock]; l.label != "Vault locked" || l.enabled {
		t.Errorf("the lock item once locked: %+v", l)
	}
	for _, id := range []int32{lock, evil, plain, header, open} {
		want := map[int32]string{open: "(oldest)"}[id]
		if st := click(id, want); !st.Locked {
			t.Fatalf("a click on item %d unlocked the vault: %+v", id, st)
		}
	}

	// Quit: the child may be gone before it replies.
	if err := menu.Call("com.canonical.dbusmenu.Event", dbus.FlagNoReplyExpected, quit, "clicked", dbus.MakeVariant(""), uint32(0)).Err; err != nil {
		t.Fatal(err)
	}
	child.waitQuit(t)
}

const trayChildEnv = "YETT_APP_TRAY_CHILD"

// trayChildState is what the child reports: the vault, the cards, what
// was decided, and what the last clicks asked the window to show.
type trayChildState struct {
	Locked   bool     `json:"locked"`
	Pending  []string `json:"pending"`
	Labels   []string `json:"labels"`
	Approved int      `json:"approved"`
	Sessions int      `json:"sessions"`
	// Raised is the card the window was asked to show since the last
	// report: "(oldest)" for the window alone, "" for nothing.
	Raised string `json:"raised"`
	Quit   bool   `json:"quit"`
}

// trayChild is Yett with its tray and two waiting cards, one from a
// program named to fool the menu. It answers "state" on stdin until a
// click quits it.
func trayChild(t *testing.T, base string) {
	a, err := New(Config{
		DataDir: filepath.Join(base, "data"), RuntimeDir: filepath.Join(base, "run"),
		Log: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Vault.Create(trayPassphrase, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return a.Approvals.current() != nil })
	evil := filepath.Join(t.TempDir(), "claude_\u202eevil\nApprove all the things")
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(evil, sh, 0o755); err != nil {
		t.Fatal(err)
	}
	b := a.Approvals.current()
	for i, agent := range []*liveAgent{startAgent(t), startAgentFrom(t, evil)} {
		target := string(rune('a'+i)) + ".example"
		if _, err := b.RequestSession(agent.rec, approval.Continuity{Change: approval.ChangeFirst}, "http", target); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return len(a.Approvals.Pending()) == 2 })
	a.startTray()

	out := json.NewEncoder(os.Stdout)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for {
		select {
		case _, ok := <-lines:
			if !ok {
				return
			}
			out.Encode(a.trayChildState())
		case <-a.desk.quitSignal:
			out.Encode(trayChildState{Quit: true})
			return
		}
	}
}

const trayPassphrase = "CANARY-tray-passphrase-5e2f"

func (a *App) trayChildState() trayChildState {
	st := trayChildState{Locked: a.vault.Status().State != vault.StateUnlocked, Pending: []string{}, Labels: []string{}}
	for _, c := range a.Approvals.Pending() {
		st.Pending = append(st.Pending, c.ID)
		st.Labels = append(st.Labels, trayCardLabel(c))
	}
	for _, d := range a.Approvals.Decisions() {
		if d.Outcome == string(approval.OutcomeApproved) {
			st.Approved++
		}
	}
	st.Sessions = len(a.Approvals.Sessions())
	a.desk.mu.Lock()
	if a.desk.raiseQueued {
		st.Raised = a.desk.pending
		if st.Raised == "" {
			st.Raised = "(oldest)"
		}
	}
	a.desk.raiseQueued, a.desk.pending = false, ""
	a.desk.mu.Unlock()
	return st
}

type trayChildProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	mu     sync.Mutex
	stderr bytes.Buffer
}

func startTrayChild(t *testing.T, bus, base string) *trayChildProc {
	t.Helper()
	c := &trayChildProc{cmd: exec.Command(os.Args[0], "-test.run=^TestForgedTrayClicksNeverAnswerOrUnlock$", "-test.count=1")}
	c.cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+bus, trayChildEnv+"="+base)
	c.in, _ = c.cmd.StdinPipe()
	out, _ := c.cmd.StdoutPipe()
	c.out = bufio.NewReader(out)
	c.cmd.Stderr = lockedBuffer{&c.mu, &c.stderr}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.in.Close()
		c.cmd.Process.Kill()
		c.cmd.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		if strings.Contains(c.stderr.String(), trayPassphrase) {
			t.Error("the passphrase reached the child's log")
		}
		if races := unknownRaces(c.stderr.String()); len(races) > 0 {
			t.Errorf("the child raced:\n%s", strings.Join(races, "\n"))
		}
	})
	return c
}

// state asks for the child's state.
func (c *trayChildProc) state(t *testing.T) trayChildState {
	t.Helper()
	fmt.Fprintln(c.in, "state")
	line, err := c.out.ReadString('\n')
	var st trayChildState
	if err != nil || json.Unmarshal([]byte(line), &st) != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("the child said %q (%v):\n%s", line, err, c.stderr.String())
	}
	return st
}

// waitClicks waits until the child logged n tray clicks, and fails if it
// logged more.
func (c *trayChildProc) waitClicks(t *testing.T, n int) {
	t.Helper()
	var got int
	waitFor(t, func() bool {
		c.mu.Lock()
		got = strings.Count(c.stderr.String(), `msg="tray click"`)
		c.mu.Unlock()
		return got >= n
	})
	if got != n {
		t.Fatalf("the child logged %d tray clicks, want %d", got, n)
	}
}

func (c *trayChildProc) waitQuit(t *testing.T) {
	t.Helper()
	line, _ := c.out.ReadString('\n')
	var st trayChildState
	if json.Unmarshal([]byte(line), &st) != nil || !st.Quit {
		t.Fatalf("after Quit the child said %q", line)
	}
	c.in.Close()
	rest, _ := io.ReadAll(c.out)
	err := c.cmd.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil && !failedOnlyOnKnownRaces(string(rest), c.stderr.String()) {
		t.Fatalf("the child: %v\n%s\n%s", err, rest, c.stderr.String())
	}
}
