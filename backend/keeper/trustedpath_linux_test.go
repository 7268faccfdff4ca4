package keeper

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/desktoptest"
)

// Issue 18, items 1 to 3: an agent gives the approval itself through the
// notifications. Each of these approved the session and let the call out
// with the real credential before; now an Approve that comes through a
// notification takes effect only once the person's system verification
// succeeds, and the person here does not answer it (the agent cannot: it
// needs their password), so nothing is released.

// 1. A rogue server: the agent's own bus connection owns
// org.freedesktop.Notifications (nobody else did), receives the card with
// its approve-<nonce> key, and presses Approve as the owner. A server that
// appears after the unlock is not trusted: it gets the card with "open
// Yett" only, so it holds no key to press, and Settings says why.
func TestRogueNotificationServerCannotApprove(t *testing.T) {
	d := newDesk(t, false, vault.ApprovalSession)
	d.presence.setPresent(false)
	rogue := desktoptest.StartRogue(t, d.bus)
	d.waitFor("the rogue to own the name", rogue.Owns)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/rogue")
	c := d.card(approval.KindSession)
	d.waitFor("the card at the rogue server", func() bool { return len(rogue.Shown()) > 0 })
	noApproveOffered(t, rogue)
	if key := rogue.Press("approve-"); key != "" {
		t.Fatalf("pressed %q, which the notification never offered", key)
	}
	st := d.k.NotificationServerState()
	if st.Trusted || !strings.Contains(st.Why, "started after you unlocked") || !strings.Contains(st.Current, "bus name "+rogue.Name()) {
		t.Fatalf("Settings shows %+v for a server that appeared after the unlock", st)
	}
	time.Sleep(300 * time.Millisecond)
	if len(d.broker().Sessions()) != 0 || d.recv.n.Load() != 0 || !d.pending(c.ID) {
		t.Fatal("the rogue's notification released the card")
	}
}

// 1, when the rogue already owns the name as the person unlocks: it is
// trusted as the server of the session (nothing tells it from a real one
// then), gets Approve, and its Approve still waits for the person's system
// verification, which it cannot give.
func TestRogueAtUnlockStillNeedsThePerson(t *testing.T) {
	d := newDesk(t, false, vault.ApprovalSession)
	d.presence.setPresent(false)
	rogue := desktoptest.StartRogue(t, d.bus)
	d.waitFor("the rogue to own the name", rogue.Owns)
	d.relock()
	if st := d.k.NotificationServerState(); !st.Trusted {
		t.Fatalf("the server owning the name at the unlock is not trusted: %+v", st)
	}
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/rogue-at-unlock")
	c := d.card(approval.KindSession)
	d.waitFor("the card at the rogue server", func() bool { return len(rogue.Shown()) > 0 })
	if key := rogue.Press("approve-"); key == "" {
		t.Fatalf("the server trusted at unlock got no approve action: %+v", rogue.Shown())
	}
	d.expectNotReleased(c)
}

// 2. The real dunst shows the card; the agent queues for the name, stops
// dunst, and its server gets the card again. The new owner was not there
// at the unlock: the card comes to it without Approve.
func TestReplacedNotificationServerCannotApprove(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalSession)
	d.presence.setPresent(false)
	rogue := desktoptest.StartRogue(t, d.bus)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/replaced")
	c := d.card(approval.KindSession)
	if !strings.Contains(d.dunst.Menu(), "#Approve ") {
		t.Fatal("the dunst trusted at the unlock got no Approve")
	}
	d.dunst.Stop()
	d.waitFor("the rogue to take the name over", rogue.Owns)
	d.waitFor("the card re-sent to the new owner", func() bool { return len(rogue.Shown()) > 0 })
	noApproveOffered(t, rogue)
	if key := rogue.Press("approve-"); key != "" {
		t.Fatalf("pressed %q", key)
	}
	if st := d.k.NotificationServerState(); st.Trusted || !strings.Contains(st.Why, "changed since you unlocked") || !strings.Contains(st.Why, "dunst") {
		t.Fatalf("Settings shows %+v after the server changed", st)
	}
	time.Sleep(300 * time.Millisecond)
	if len(d.broker().Sessions()) != 0 || d.recv.n.Load() != 0 || !d.pending(c.ID) {
		t.Fatal("the new owner released the card")
	}
}

// A server an agent run started, even one that owned the name at the
// unlock and runs the genuine /usr/bin/dunst (with the agent's own
// configuration), never carries Approve: the agent is among its ancestors.
func TestAgentStartedNotificationServerGetsNoApprove(t *testing.T) {
	d := newDesk(t, false, vault.ApprovalSession)
	a := startAgent(t, d.runDir)
	dn := desktoptest.NewDunst(t, desktoptest.Display(t), d.bus)
	pid := a.spawn(dn.Command())
	dn.WaitReady()
	d.relock()
	a.call("http://" + d.recv.addr + "/agent-dunst")
	d.card(approval.KindSession)
	d.waitFor("the card at the agent's dunst", func() bool { return dn.Displayed() == 1 })
	if menu := dn.Menu(); strings.Contains(menu, "#Approve ") || !strings.Contains(menu, "#Open Yett ") {
		t.Fatalf("the agent's own dunst (pid %d) offers:\n%s", pid, menu)
	}
	st := d.k.NotificationServerState()
	if st.Trusted || !strings.Contains(st.Why, "started by an agent run") || !strings.Contains(st.Why, fmt.Sprintf("pid %d", a.cmd.Process.Pid)) {
		t.Fatalf("Settings shows %+v for a server the agent started", st)
	}
}

// The person accepts a new server in the window: not another one than
// Settings showed, not without the system's verification, and then its
// notifications carry Approve, the approval records which server and
// process answered, the acceptance is audited, and the next unlock trusts
// a server only if it runs the accepted program.
func TestAcceptedNotificationServerAnswers(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalSession)
	d.dunst.Stop()
	second := desktoptest.StartDunst(t, desktoptest.Display(t), d.bus)
	d.waitFor("the second dunst to be seen", func() bool { return d.k.NotificationServerState().Current != "" })
	st := d.k.NotificationServerState()
	if st.Trusted {
		t.Fatalf("a server that took the name after the unlock is trusted: %+v", st)
	}
	ctx := context.Background()
	if err := d.k.AcceptNotificationServer(ctx, ":1.99999"); err == nil {
		t.Fatal("accepted a server Settings did not show")
	}
	d.presence.setPresent(false)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := d.k.AcceptNotificationServer(short, st.Name)
	cancel()
	if err == nil || d.k.NotificationServerState().Trusted {
		t.Fatalf("accepted without the person's verification: %v", err)
	}
	d.presence.setPresent(true)
	if err := d.k.AcceptNotificationServer(ctx, st.Name); err != nil {
		t.Fatal(err)
	}
	if now := d.k.NotificationServerState(); !now.Trusted {
		t.Fatalf("after accepting: %+v", now)
	}
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/accepted")
	d.card(approval.KindSession)
	d.waitFor("the card at the accepted dunst", func() bool { return second.Displayed() == 1 })
	second.Invoke("Approve")
	if r := a.reply(); r.Err != "" || r.IsError || d.recv.n.Load() != 1 {
		t.Fatalf("agent reply %+v, receiver %d", r, d.recv.n.Load())
	}
	ss := d.broker().Sessions()
	want := fmt.Sprintf("pid %d, /usr/bin/dunst)", second.PID())
	if len(ss) != 1 || !strings.Contains(ss[0].Via.Detail, want) || !strings.HasPrefix(ss[0].Via.Detail, "dunst ") {
		t.Fatalf("the approval records %+v, want the server's name, pid and program (%s)", ss, want)
	}
	var accepted, approved bool
	for _, e := range events(t, d.v, d.dir) {
		if e.Type == audit.EventVaultChanged && e.VaultChange != nil && strings.Contains(e.VaultChange.Name, "notification server accepted: dunst") {
			accepted = true
		}
		if e.Type == audit.EventSessionApproved && e.Via != nil && strings.Contains(e.Via.Detail, want) {
			approved = true
		}
	}
	if !accepted || !approved {
		t.Fatalf("audit: acceptance recorded %v, approval names the server %v", accepted, approved)
	}
	// The next unlock: the accepted dunst still runs and is trusted; a
	// server running another program is not, whatever it calls itself.
	d.relock()
	if st := d.k.NotificationServerState(); !st.Trusted {
		t.Fatalf("after an unlock, the accepted server: %+v", st)
	}
	second.Stop()
	rogue := desktoptest.StartRogue(t, d.bus)
	d.waitFor("the rogue to own the name", rogue.Owns)
	d.relock()
	if st := d.k.NotificationServerState(); st.Trusted || !strings.Contains(st.Why, "not the one you accepted") {
		t.Fatalf("a rogue owning the name at an unlock, after dunst was accepted: %+v", st)
	}
}

// noApproveOffered fails if any notification the rogue was sent carries
// Approve or Deny.
func noApproveOffered(t *testing.T, rogue *desktoptest.Rogue) {
	t.Helper()
	for _, n := range rogue.Shown() {
		for _, key := range n.Actions {
			if strings.HasPrefix(key, "approve-") || strings.HasPrefix(key, "deny-") {
				t.Fatalf("a server the person does not trust was offered %q: %+v", key, n)
			}
		}
	}
}

// relock locks the vault and unlocks it again, as the person does.
func (d *desk) relock() {
	d.t.Helper()
	if err := d.v.Lock("test"); err != nil {
		d.t.Fatal(err)
	}
	if err := d.v.Unlock(vault.Passphrase(pass)); err != nil {
		d.t.Fatal(err)
	}
	d.waitFor("the unlock to reach the keeper", func() bool { return d.k.State().Broker != nil && d.v.Status().State == vault.StateUnlocked })
	time.Sleep(100 * time.Millisecond) // the keeper follows the vault's events in order
}

// 3. The genuine dunst takes orders from any process of the user: what
// dunstctl sends, with a menu program of the agent's, makes dunst itself
// invoke Approve, as the rightful owner, with the right id and nonce.
func TestDrivenNotificationServerCannotApprove(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalSession)
	d.presence.setPresent(false)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/driven")
	c := d.card(approval.KindSession)
	d.dunst.Invoke("Approve")
	d.expectNotReleased(c)
	// The person's own answer in the window still works, verified.
}

// expectNotReleased checks that card c was asked a verification and, with
// nobody answering it, neither a session nor a call came of the Approve.
func (d *desk) expectNotReleased(c approval.Request) {
	d.t.Helper()
	d.waitFor("the verification to be asked", func() bool {
		for _, id := range d.presence.askedAbout() {
			if id == c.ID {
				return true
			}
		}
		return false
	})
	time.Sleep(300 * time.Millisecond) // a released call would reach the receiver by now
	if len(d.broker().Sessions()) != 0 || d.recv.n.Load() != 0 || !d.pending(c.ID) {
		d.t.Fatalf("an Approve through a notification took effect without the person: sessions %d, receiver %d, pending %v",
			len(d.broker().Sessions()), d.recv.n.Load(), d.pending(c.ID))
	}
	for _, dec := range d.broker().Decisions() {
		if dec.RequestID == c.ID && dec.Outcome == approval.OutcomeApproved {
			d.t.Fatalf("decision %+v", dec)
		}
	}
}

// Without system verification here (polkit authorizes nobody for a root
// Yett, and a desktop may have no polkit at all), notifications carry no
// Approve at all: a rogue server is never handed an approve key, and says
// so in the body.
func TestNoVerificationNoApproveButton(t *testing.T) {
	// The platform's own verification: polkit, which refuses a root Yett.
	d := newDesk(t, false, vault.ApprovalSession, func(c *Config) { c.Presence = nil })
	rogue := desktoptest.StartRogue(t, d.bus)
	d.waitFor("the rogue to own the name", rogue.Owns)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/no-verification")
	d.card(approval.KindSession)
	d.waitFor("the card at the server", func() bool { return len(rogue.Shown()) > 0 })
	for _, n := range rogue.Shown() {
		for _, key := range n.Actions {
			if strings.HasPrefix(key, "approve-") || strings.HasPrefix(key, "deny-") {
				t.Fatalf("a notification offered %q although nothing can verify the person: %+v", key, n)
			}
		}
	}
	if key := rogue.Press("approve-"); key != "" {
		t.Fatal("pressed an approve the notification never offered")
	}
}
