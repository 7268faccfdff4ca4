package keeper

import (
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/approval"
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
// its approve-<nonce> key, and presses Approve as the owner.
func TestRogueNotificationServerCannotApprove(t *testing.T) {
	d := newDesk(t, false, vault.ApprovalSession)
	d.presence.setPresent(false)
	rogue := desktoptest.StartRogue(t, d.bus)
	d.waitFor("the rogue to own the name", rogue.Owns)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/rogue")
	c := d.card(approval.KindSession)
	d.waitFor("the card at the rogue server", func() bool { return len(rogue.Shown()) > 0 })
	if key := rogue.Press("approve-"); key == "" {
		t.Fatalf("the rogue got no approve action: %+v", rogue.Shown())
	}
	d.expectNotReleased(c)
}

// 2. The real dunst shows the card; the agent queues for the name, stops
// dunst, and its server gets the card again and presses Approve.
func TestReplacedNotificationServerCannotApprove(t *testing.T) {
	d := newDesk(t, true, vault.ApprovalSession)
	d.presence.setPresent(false)
	rogue := desktoptest.StartRogue(t, d.bus)
	a := startAgent(t, d.runDir)
	a.call("http://" + d.recv.addr + "/replaced")
	c := d.card(approval.KindSession)
	d.dunst.Stop()
	d.waitFor("the rogue to take the name over", rogue.Owns)
	d.waitFor("the card re-sent to the new owner", func() bool { return len(rogue.Shown()) > 0 })
	rogue.Press("approve-")
	d.expectNotReleased(c)
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
