package keeper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/notify"
	"github.com/yettdev/yett/backend/presence"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/desktoptest"
)

// These tests run the keeper as the app runs it, with notifications on a
// private desktop: a session bus under dbus-run-session, Xvfb and a real
// dunst. A real agent process calls through the real `yett mcp` shim; the
// person answers in dunst's own menu (dunstctl context), so the daemon
// emits ActionInvoked exactly as for a click.

const notifyCanary = "CANARY-keeper-notify-61c0a9d2"

// desk is a keeper on a private desktop, with one credential bound to a
// loopback receiver.
type desk struct {
	t      testing.TB
	bus    string
	dunst  *desktoptest.Dunst
	k      *Keeper
	v      *vault.Vault
	dir    string
	runDir string
	recv   *receiver
	credID string

	mu     sync.Mutex
	raised []string
	// presence stands for the person at the OS's verification prompt.
	presence *testPresence
}

// testPresence stands for the person at the system's verification prompt
// in these in-process tests: they run as root, whom polkit authorizes
// without asking, so the real polkit round (a real polkitd, pkttyagent, a
// person's password) is tested where the person's own process asks
// (backend/presence, and TestPolkitReleasesOnlyItsCard here). present:
// the person verifies each card at once; otherwise nobody answers and each
// verification waits until its card ends.
type testPresence struct {
	mu      sync.Mutex
	present bool
	asked   []string
}

func (p *testPresence) Verify(ctx context.Context, r presence.Request) (string, error) {
	p.mu.Lock()
	p.asked = append(p.asked, r.Card)
	present := p.present
	p.mu.Unlock()
	if present {
		return "test: the person", nil
	}
	<-ctx.Done()
	return "", ctx.Err()
}

func (p *testPresence) Available(context.Context) (bool, string) { return true, "" }

func (p *testPresence) setPresent(present bool) {
	p.mu.Lock()
	p.present = present
	p.mu.Unlock()
}

func (p *testPresence) askedAbout() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// newDesk starts the desktop (withDunst: or a bus with no notification
// server) and a keeper following an unlocked vault whose credential needs
// approval as approvalMode says.
func newDesk(t testing.TB, withDunst bool, approvalMode vault.Approval, opts ...func(*Config)) *desk {
	t.Helper()
	d := &desk{t: t, bus: desktoptest.SessionBus(t), presence: &testPresence{present: true}}
	if withDunst {
		d.dunst = desktoptest.StartDunst(t, desktoptest.Display(t), d.bus)
	}
	base, err := os.MkdirTemp("", "yk") // short: the socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	d.dir, d.runDir = filepath.Join(base, "data"), filepath.Join(base, "run")
	d.v = openVault(t, d.dir)
	if err := d.v.Create(vault.Passphrase(pass), false); err != nil {
		t.Fatal(err)
	}
	d.recv = startReceiver(t, notifyCanary)
	cv, err := d.v.Credentials().Add(vault.NewCredential{
		Name: "receiver", Secret: vault.NewSecret([]byte(notifyCanary)), Injection: vault.Injection{Format: vault.InjectBearer},
		Hosts: []string{d.recv.addr}, Approval: approvalMode,
	})
	if err != nil {
		t.Fatal(err)
	}
	d.credID = cv.ID
	cfg := Config{
		DataDir: d.dir, RuntimeDir: d.runDir, Vault: d.v, ShimPath: buildYett(t), ApprovalTimeout: time.Minute,
		Notify: func(h notify.Handlers) (notify.Notifier, error) {
			return notify.Open(h, notify.Options{BusAddress: d.bus, Icon: "yett"})
		},
		Raise: func(card string) {
			d.mu.Lock()
			d.raised = append(d.raised, card)
			d.mu.Unlock()
		},
		Presence: d.presence,
		// A desktop where other programs cannot type into the window:
		// verification for per-call cards in the window, and for every
		// answer from a notification.
		Getenv: func(string) string { return "" },
	}
	for _, o := range opts {
		o(&cfg)
	}
	k, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d.k = k
	t.Cleanup(func() { k.Close() })
	if k.State().Broker == nil {
		t.Fatalf("no gateway: %+v", k.State())
	}
	return d
}

func (d *desk) broker() *approval.Broker { return d.k.State().Broker }

// waitFor polls cond for up to 30 s.
func (d *desk) waitFor(what string, cond func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			d.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// card waits for the one pending card of kind and for dunst to show it.
func (d *desk) card(kind approval.Kind) approval.Request {
	d.t.Helper()
	var card approval.Request
	d.waitFor("a "+string(kind)+" card", func() bool {
		for _, p := range d.broker().Pending() {
			if p.Kind == kind {
				card = p
				return true
			}
		}
		return false
	})
	if d.dunst != nil {
		d.waitFor("its notification", func() bool { return d.dunst.Displayed() == 1 })
	}
	return card
}

func (d *desk) pending(id string) bool {
	for _, p := range d.broker().Pending() {
		if p.ID == id {
			return true
		}
	}
	return false
}

// refused lists the answer_refused entries of the audit log.
func (d *desk) refused() []audit.Event {
	var out []audit.Event
	for _, e := range events(d.t, d.v, d.dir) {
		if e.Type == audit.EventAnswerRefused {
			out = append(out, e)
		}
	}
	return out
}

// menuEntry is dunst's menu line of action key in menu, "" if absent.
func menuEntry(menu, key string) string {
	for _, l := range strings.Split(menu, "\n") {
		if strings.Contains(l, ","+key) {
			return l
		}
	}
	return ""
}

// A gateway card becomes a notification with both actions; Approve picked
// in dunst approves the real agent's session and its call reaches the
// receiver; a second answer (the window's) is told the card is gone.
func TestApproveFromDunst(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalSession)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/approve")
	c := d.card(approval.KindSession)
	menu := d.dunst.Menu()
	for _, label := range []string{"#Approve ", "#Deny ", "#Open Yett "} {
		if !strings.Contains(menu, label) {
			t.Errorf("dunst offers no %q:\n%s", label, menu)
		}
	}
	if !strings.Contains(menu, "New agent") {
		t.Errorf("the notification does not say what changed:\n%s", menu)
	}
	if d.recv.n.Load() != 0 {
		t.Fatal("the call went out before anyone answered")
	}
	d.dunst.Invoke("Approve")
	r := a.reply()
	if r.Err != "" || r.IsError || strings.Contains(r.Text, notifyCanary) {
		t.Fatalf("agent reply %+v", r)
	}
	if d.recv.n.Load() != 1 || d.recv.credentials.Load() != 1 {
		t.Fatalf("receiver saw %d calls, %d with the credential", d.recv.n.Load(), d.recv.credentials.Load())
	}
	if err := d.broker().Answer(c.ID, false, approval.SurfaceApp); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("second answer: %v", err)
	}
	ss := d.broker().Sessions()
	if len(ss) != 1 || ss[0].Surface != approval.SurfaceNotification || ss[0].Via.Verified != "test: the person" {
		t.Fatalf("sessions %+v", ss)
	}
	if asked := d.presence.askedAbout(); len(asked) != 1 || asked[0] != c.ID {
		t.Fatalf("verification asked about %v, want the card %s", asked, c.ID)
	}
	if ds := d.broker().Decisions(); len(ds) != 1 || ds[0].Surface != approval.SurfaceNotification || ds[0].Outcome != approval.OutcomeApproved {
		t.Fatalf("decisions %+v", ds)
	}
	d.waitFor("the answered card's notification to close", func() bool { return d.dunst.Displayed() == 0 })
}

// Deny picked in dunst denies: the agent's call is refused and nothing
// reaches the receiver.
func TestDenyFromDunst(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalSession)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/deny")
	d.card(approval.KindSession)
	d.dunst.Invoke("Deny")
	r := a.reply()
	if !r.IsError || d.recv.n.Load() != 0 {
		t.Fatalf("agent reply %+v, receiver %d", r, d.recv.n.Load())
	}
	if ds := d.broker().Decisions(); len(ds) != 1 || ds[0].Outcome != approval.OutcomeDenied || ds[0].Surface != approval.SurfaceNotification {
		t.Fatalf("decisions %+v", ds)
	}
}

// A forged ActionInvoked from another bus connection, with the very id
// and action key dunst holds, is ignored and audited, and the card stays
// pending; a signal about another card's id changes nothing.
func TestForgedActionInvoked(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalSession)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/forged")
	c := d.card(approval.KindSession)
	// What an eavesdropper learns: the id and the key, as dunst's menu
	// shows them ("[1,approve-<nonce>]").
	entry := menuEntry(d.dunst.Menu(), "approve-")
	open, close := strings.LastIndex(entry, "["), strings.LastIndex(entry, "]")
	if open < 0 || close < open {
		t.Fatalf("no approve entry in the menu: %q", entry)
	}
	idText, key, _ := strings.Cut(entry[open+1:close], ",")
	var id uint32
	for _, ch := range idText {
		id = id*10 + uint32(ch-'0')
	}
	forger, err := dbus.Connect(d.bus)
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Close()
	emit := func(id uint32, key string) {
		if err := forger.Emit("/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked", id, key); err != nil {
			t.Fatal(err)
		}
	}
	emit(id, key)
	// The same, sent straight to Yett's connection: match rules do not
	// filter unicast signals.
	d.waitFor("the forged answer in the audit log", func() bool { return len(d.refused()) >= 1 })
	emit(id+1, key) // an id that is not this card's
	d.waitFor("the second forged answer in the audit log", func() bool { return len(d.refused()) >= 2 })
	time.Sleep(200 * time.Millisecond) // anything wrongly believed would act by now
	if !d.pending(c.ID) || d.recv.n.Load() != 0 || len(d.broker().Sessions()) != 0 {
		t.Fatalf("a forged answer changed something: pending %v, receiver %d", d.pending(c.ID), d.recv.n.Load())
	}
	e := d.refused()[0]
	if e.Reason != audit.ReasonForgedAnswer || e.Surface != approval.SurfaceNotification || e.Answer == nil ||
		e.Answer.RequestID != c.ID || e.Answer.Sender != forger.Names()[0] || e.Answer.NotificationID != id || e.BootID != d.k.BootID() {
		t.Fatalf("audit entry %+v %+v", e, e.Answer)
	}
	// The person's own answer still works.
	d.dunst.Invoke("Approve")
	if r := a.reply(); r.IsError || r.Err != "" {
		t.Fatalf("agent reply %+v", r)
	}
}

// The agent exits while its card waits: the card is withdrawn, and so is
// its notification (dunst shows nothing and lists it as closed).
func TestWithdrawnCardClosesItsNotification(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalSession)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/withdrawn")
	c := d.card(approval.KindSession)
	a.kill()
	d.waitFor("the card to be withdrawn", func() bool { return !d.pending(c.ID) })
	d.waitFor("dunst to close the notification", func() bool { return d.dunst.Displayed() == 0 })
	found := false
	for _, n := range d.dunst.History() {
		if n.AppName == "Yett" && strings.Contains(n.Summary, "New agent") {
			found = true
		}
	}
	if !found {
		t.Fatalf("dunst's history does not list the closed notification: %+v", d.dunst.History())
	}
}

// A per-call card of a credential marked sensitive: its notification
// offers no Approve or Deny, only opening the card; an approve that claims
// to come from a notification is refused by the broker and audited, and
// the card stays pending until the window answers it.
func TestSensitiveCallsAnsweredOnlyInTheWindow(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalPerCall)
	p := notify.DefaultPolicy()
	p.WindowOnly = []string{d.credID}
	if err := d.k.SetNotificationPolicy(p); err != nil {
		t.Fatal(err)
	}
	if got := d.k.NotificationPolicy(); len(got.WindowOnly) != 1 {
		t.Fatalf("policy %+v", got)
	}
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/sensitive")
	d.card(approval.KindSession)
	d.dunst.Invoke("Approve") // the session card: allowed from a notification
	c := d.card(approval.KindCall)
	menu := d.dunst.Menu()
	if strings.Contains(menu, "#Approve ") || strings.Contains(menu, "#Deny ") || !strings.Contains(menu, "#Open Yett ") {
		t.Fatalf("the sensitive card's notification offers:\n%s", menu)
	}
	if err := d.broker().Answer(c.ID, true, approval.SurfaceNotification); !errors.Is(err, approval.ErrWindowOnly) {
		t.Fatalf("approve from a notification: %v", err)
	}
	// The same answer as the notifier hands it on: refused, audited,
	// the window raised with the card.
	d.withRelay(func(rl *notify.Relay) {
		rl.Respond(notify.Response{Card: c.ID, Action: notify.ActionApprove, Server: d.k.notes.notifier.Status().Owner})
	})
	if !d.pending(c.ID) || d.recv.n.Load() != 0 {
		t.Fatal("a refused answer released the call")
	}
	ev := d.refused()
	if len(ev) != 1 || ev[0].Reason != audit.ReasonWindowOnly || ev[0].Answer.RequestID != c.ID {
		t.Fatalf("audit %+v", ev)
	}
	d.mu.Lock()
	raised := append([]string(nil), d.raised...)
	d.mu.Unlock()
	if len(raised) == 0 || raised[len(raised)-1] != c.ID {
		t.Fatalf("raised %v, want the card %s", raised, c.ID)
	}
	// Opening from the notification (a click on its body: the "default"
	// action) brings the window with the card.
	d.mu.Lock()
	before := len(d.raised)
	d.mu.Unlock()
	d.dunst.Invoke("Open Yett")
	d.waitFor("the window raised with the card by the click", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.raised) > before && d.raised[len(d.raised)-1] == c.ID
	})
	if err := d.broker().Answer(c.ID, true, approval.SurfaceApp); err != nil {
		t.Fatal(err)
	}
	if r := a.reply(); r.IsError || r.Err != "" || d.recv.n.Load() != 1 {
		t.Fatalf("agent reply %+v, receiver %d", r, d.recv.n.Load())
	}
}

func (d *desk) withRelay(fn func(*notify.Relay)) { d.k.notes.withRelay(fn) }

// Without a notification server, a card raises the window instead, and
// the state says why.
func TestNoNotificationServerRaisesTheWindow(t *testing.T) {
	d := newDesk(t, false, vault.ApprovalSession)
	if st := d.k.State().Notifications; st.Available || st.Problem == "" {
		t.Fatalf("status %+v", st)
	}
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/fallback")
	c := d.card(approval.KindSession)
	d.waitFor("the window raised with the card", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.raised) == 1 && d.raised[0] == c.ID
	})
}

// The person answers in the window while the notification shows: the
// notification is withdrawn at once, and it said what the card says (who
// asks, signed or not, the pid, what changed, what it wants to reach, the
// scope) and nothing secret.
func TestAnsweredInTheWindowWithdrawsTheNotification(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalSession)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/window")
	c := d.card(approval.KindSession)
	if err := d.broker().Answer(c.ID, true, approval.SurfaceApp); err != nil {
		t.Fatal(err)
	}
	if r := a.reply(); r.IsError || r.Err != "" || d.recv.n.Load() != 1 {
		t.Fatalf("agent reply %+v, receiver %d", r, d.recv.n.Load())
	}
	d.waitFor("the notification to be withdrawn", func() bool { return d.dunst.Displayed() == 0 })
	if ds := d.broker().Decisions(); len(ds) != 1 || ds[0].Surface != approval.SurfaceApp {
		t.Fatalf("decisions %+v", ds)
	}
	var shown *desktoptest.Notification
	for _, n := range d.dunst.History() {
		if n.AppName == "Yett" {
			shown = &n
			break
		}
	}
	if shown == nil {
		t.Fatalf("dunst's history has no notification from Yett: %+v", d.dunst.History())
	}
	text := shown.Summary + "\n" + shown.Body
	for _, want := range []string{
		"New agent", c.Who.Program(), fmt.Sprintf("pid %d", c.Who.PID), "unsigned", d.recv.addr,
		"Scope: this run", "Approve it to use " + d.recv.addr,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the notification does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, notifyCanary) || strings.Contains(text, "keeper test") {
		t.Fatalf("the notification carries the secret or the request's body:\n%s", text)
	}
}

// A per-call card's notification names the method and the target; locking
// the vault withdraws the card and its notification at once.
func TestCallCardWordsAndVaultLockWithdraws(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalPerCall)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/per-call/path")
	d.card(approval.KindSession)
	d.dunst.Invoke("Approve")
	c := d.card(approval.KindCall)
	menu := d.dunst.Menu()
	want := "Approve POST to " + d.recv.addr + "?"
	if !strings.Contains(menu, want) {
		t.Errorf("the call card's notification is not titled %q:\n%s", want, menu)
	}
	if err := d.v.Lock("test"); err != nil {
		t.Fatal(err)
	}
	d.waitFor("the card to be withdrawn", func() bool { return !d.pending(c.ID) })
	d.waitFor("its notification to close", func() bool { return d.dunst.Displayed() == 0 })
	if r := a.reply(); !r.IsError || d.recv.n.Load() != 0 {
		t.Fatalf("agent reply %+v, receiver %d", r, d.recv.n.Load())
	}
	for _, n := range d.dunst.History() {
		if n.AppName != "Yett" {
			continue
		}
		if text := n.Summary + "\n" + n.Body; strings.Contains(text, notifyCanary) || strings.Contains(text, "keeper test") {
			t.Fatalf("a notification carries the secret or the request body:\n%s", text)
		}
		if strings.HasPrefix(n.Summary, "Approve POST") && !strings.Contains(n.Body, "/per-call/path") {
			t.Errorf("the call card's notification does not name the path: %+v", n)
		}
	}
}
