//go:build unix

package gateway

// The release criterion of seed 004 and the resume cases of seed 000, each a
// separate test, with real agent processes running the go-sdk client over the
// real `yett mcp` shim, a real vault, a real journal and audit log, and a
// loopback receiver as the independent observer.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
)

func tag(prefix string) string {
	var b [2]byte
	rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// lockedThenFresh is seed 004's drill: a call made while the vault is locked
// is refused at once, nothing about it survives the unlock (no run, no card),
// and a fresh call from a new agent process after the unlock arrives once.
// between runs after the LOCKED answer and before the unlock; after runs
// after the unlock.
func lockedThenFresh(t *testing.T, between, after func(w *world, a *agent)) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	w.lock()
	old := tag("locked")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(old)), "LOCKED")
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("a locked call raised a card: %+v", p)
	}
	if between != nil {
		between(w, a)
	}
	w.unlock()
	w.settleAbsent(old)
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("the unlock raised a card for the old call: %+v", p)
	}
	if after != nil {
		after(w, a)
	}
	w.settleAbsent(old)

	fresh := tag("fresh")
	b := startAgent(t, w.runDir)
	b.connect()
	wait := b.callAsync(agentapi.ToolHTTPRequest, w.req(fresh))
	w.approveNext()
	mustContain(t, wait(), `"status":200`)
	if n := w.recv.count(t, old); n != 0 {
		t.Fatalf("old id arrived %d times", n)
	}
	if n := w.recv.count(t, fresh); n != 1 {
		t.Fatalf("fresh id arrived %d times, want 1", n)
	}
}

// 1. The agent stays alive (and connected) through the unlock.
func TestReleaseLockedAgentKeptAlive(t *testing.T) {
	lockedThenFresh(t, func(w *world, a *agent) {
		// yett.status is a built-in: it answers while locked, but no run
		// may see call fates while locked (no session is valid then), not
		// even whether the key exists.
		r := a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-locked-none"})
		mustContain(t, r, "APPROVAL_REQUIRED")
		if strings.Contains(r.Text, "NOT_FOUND") {
			t.Fatalf("an unapproved run learned about a key: %+v", r)
		}
	}, func(w *world, a *agent) {
		// Once approved after the unlock, the live agent asks about its
		// old call: it was never kept.
		wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(tag("alive")))
		w.approveNext()
		mustContain(t, wait(), `"status":200`)
		mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-" + "none"}), "NOT_FOUND")
	})
}

// 2. The agent is killed before the unlock.
func TestReleaseLockedAgentKilled(t *testing.T) {
	lockedThenFresh(t, func(w *world, a *agent) { a.kill() }, nil)
}

// 3. Only the shim is restarted before the unlock.
func TestReleaseLockedShimRestarted(t *testing.T) {
	lockedThenFresh(t, func(w *world, a *agent) {
		a.do(agentCmd{Op: "kill-shim"})
		a.connect()
	}, nil)
}

// 4. The socket connection is cut after the LOCKED answer and the agent
// reconnects after the unlock.
func TestReleaseLockedSocketCut(t *testing.T) {
	lockedThenFresh(t, func(w *world, a *agent) {
		w.gw.mu.Lock()
		var conns []*conn
		for c := range w.gw.conns {
			conns = append(conns, c)
		}
		w.gw.mu.Unlock()
		for _, c := range conns {
			c.close()
		}
	}, func(w *world, a *agent) {
		a.do(agentCmd{Op: "close"})
		a.connect()
		if p := w.gw.Broker().Pending(); len(p) != 0 {
			t.Fatalf("the reconnect raised a card: %+v", p)
		}
	})
}

// 7. Two identical agent processes: approving one does not cover the other.
func TestReleaseTwoIdenticalAgents(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a, b := startAgent(t, w.runDir), startAgent(t, w.runDir)
	a.connect()
	b.connect()
	idA, idB := tag("twin-a"), tag("twin-b")
	waitA := a.callAsync(agentapi.ToolHTTPRequest, w.req(idA))
	cardA := w.approveNext()
	mustContain(t, waitA(), `"status":200`)

	waitB := b.callAsync(agentapi.ToolHTTPRequest, w.req(idB))
	cardB := w.pending(approval.KindSession)
	if cardB.RunID == cardA.RunID || cardB.Who.PID == cardA.Who.PID || cardB.Who.ExeSHA256 != cardA.Who.ExeSHA256 {
		t.Fatalf("cards A %+v B %+v", cardA, cardB)
	}
	// The twin is a separate process: its card says so, and which run of
	// the same program is live.
	if cardB.Change != approval.ChangeAnotherRun || !strings.Contains(cardB.ChangeDetail, "is live") {
		t.Fatalf("twin card says %q (%q)", cardB.Change, cardB.ChangeDetail)
	}
	w.gw.Broker().Answer(cardB.ID, false, "test")
	mustContain(t, waitB(), "DENIED")
	if n := w.recv.count(t, idB); n != 0 {
		t.Fatalf("twin's call arrived %d times", n)
	}
	if n := len(w.gw.Broker().Sessions()); n != 1 {
		t.Fatalf("%d sessions", n)
	}
}

// 8. The agent restarts and presents the same "conversation" (the same
// request and idempotency key): a new approval is required and the card
// says "agent restarted".
func TestReleaseAgentRestartedSameConversation(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	first := tag("conv")
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(first))
	w.approveNext()
	mustContain(t, wait(), `"status":200`)
	a.kill()
	waitSessions(t, w, 0)

	a2 := startAgent(t, w.runDir)
	a2.connect()
	next := tag("conv-next")
	// A new process is asked like a first request (its call waits on its
	// card); the card says what changed.
	wait = a2.callAsync(agentapi.ToolHTTPRequest, w.req(next))
	card := w.pending(approval.KindSession)
	if card.Change != approval.ChangeAgentRestarted || !strings.Contains(card.ChangeDetail, "ended at") {
		t.Fatalf("card says %q (%q)", card.Change, card.ChangeDetail)
	}
	if n := w.recv.count(t, next); n != 0 {
		t.Fatal("call ran without approval")
	}
	w.gw.Broker().Answer(card.ID, true, "test")
	mustContain(t, wait(), `"status":200`)
	// The old key replayed by the new run is not sent again either.
	mustContain(t, a2.call(agentapi.ToolHTTPRequest, w.req(first)), "COMPLETED status=200")
	if w.recv.count(t, first) != 1 || w.recv.count(t, next) != 1 {
		t.Fatal("wrong arrival counts")
	}
}

// 9. The gateway restarts while an approved agent lives: the next call is
// denied with REAUTH_REQUIRED gateway_restarted, from durable evidence.
func TestReleaseGatewayRestartedInProcess(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("before")
	oldBoot := w.gw.BootID()
	w.stop()
	w.start()
	if w.gw.BootID() == oldBoot {
		t.Fatal("boot id reused")
	}
	a.do(agentCmd{Op: "close"})
	a.connect()
	after := tag("after")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(after)), "REAUTH_REQUIRED gateway_restarted")
	card := w.pending(approval.KindSession)
	if card.Change != approval.ChangeGatewayRestarted {
		t.Fatalf("card says %q", card.Change)
	}
	if n := w.recv.count(t, after); n != 0 {
		t.Fatal("call ran on the old approval")
	}
}

// 10. The vault is locked and unlocked while an approved agent waits.
func TestReleaseVaultCycledWhileApproved(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("before")
	w.lock()
	w.unlock()
	waitSessions(t, w, 0)
	after := tag("after")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(after)), "REAUTH_REQUIRED vault_state_changed")
	card := w.pending(approval.KindSession)
	if card.Change != approval.ChangeVaultLocked {
		t.Fatalf("card says %q", card.Change)
	}
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-" + after}), "authority")
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(after)), `"status":200`)
	if n := w.recv.count(t, after); n != 1 {
		t.Fatalf("%d arrivals", n)
	}
}

// 12. An approval left pending while the agent exits: the card disappears
// and the call never runs, even if someone answers it afterwards.
func TestReleasePendingApprovalAgentExits(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	id := tag("orphan")
	a.callAsync(agentapi.ToolHTTPRequest, w.req(id))
	card := w.pending(approval.KindSession)
	a.kill()
	deadline := time.Now().Add(testWait)
	for len(w.gw.Broker().Pending()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("card outlived the agent")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := w.gw.Broker().Answer(card.ID, true, "test"); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("late answer: %v", err)
	}
	w.settleAbsent(id)
	if n := len(w.gw.Broker().Sessions()); n != 0 {
		t.Fatalf("%d sessions", n)
	}
}

func waitSessions(t *testing.T, w *world, n int) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for len(w.gw.Broker().Sessions()) != n {
		if time.Now().After(deadline) {
			t.Fatalf("sessions %d, want %d", len(w.gw.Broker().Sessions()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
