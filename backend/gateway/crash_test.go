//go:build unix

package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/agentapi"
)

// 11. The gateway is killed with SIGKILL after a call was dispatched and
// before its result, and while another call was approved and about to be
// recorded (nothing of it durable). After a restart: the first is
// STATUS_UNKNOWN and never sent again; the second is RETRY_SAFE (Yett holds
// no record of it, and records every call before sending it) and runs once
// when retried.
func TestReleaseGatewayKilledMidCall(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.stop() // this test runs the gateway in processes of its own
	w.vault.Close()

	unknown, never := tag("unknown"), tag("never")
	release := make(chan struct{})
	w.recv.mu.Lock()
	w.recv.hold = func(id string) {
		if id == unknown {
			<-release
		}
	}
	w.recv.mu.Unlock()
	defer close(release)

	g1 := startGatewayProc(t, w, "key-"+never)
	a, b := startAgent(t, w.runDir), startAgent(t, w.runDir)
	a.connect()
	b.connect()
	waitNever := a.callAsync(agentapi.ToolHTTPRequest, w.req(never))
	g1.stdin.Write([]byte("approve\n"))
	// The call goes on as soon as the card is approved, so the helper may
	// report the hold before the approval.
	seen := g1.expect("") + "\n" + g1.expect("")
	if !strings.Contains(seen, "approved \"first request\" <nil>") || !strings.Contains(seen, "held key-"+never) {
		t.Fatalf("gateway helper said %q", seen)
	}
	waitUnknown := b.callAsync(agentapi.ToolHTTPRequest, w.req(unknown))
	g1.approve()
	deadline := time.Now().Add(testWait)
	for w.recv.count(t, unknown) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the call never reached the receiver")
		}
		time.Sleep(5 * time.Millisecond)
	}
	g1.kill() // SIGKILL: dispatched, result never recorded
	if r := waitUnknown(); r.OK && !r.IsError {
		t.Fatalf("a result reached the agent from a killed gateway: %+v", r)
	}
	waitNever()

	g2 := startGatewayProc(t, w, "")
	a.do(agentCmd{Op: "close"})
	a.connect()
	// Before this run is approved again it learns nothing about its calls.
	st := a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-" + unknown})
	mustContain(t, st, "APPROVAL_REQUIRED")
	mustContain(t, st, "REAUTH_REQUIRED gateway_restarted")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(unknown)), "REAUTH_REQUIRED gateway_restarted")
	if l := g2.approve(); l != `approved "gateway restarted" <nil>` {
		t.Fatalf("card: %s", l)
	}
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-" + unknown}), "STATUS_UNKNOWN inspect_activity_journal")
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-" + never}), "RETRY_SAFE previous_action_not_started")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(unknown)), "STATUS_UNKNOWN")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(never)), `"status":200`)
	w.settleAbsent("nothing") // give a replay time to show
	if n := w.recv.count(t, unknown); n != 1 {
		t.Fatalf("the unknown call arrived %d times", n)
	}
	if n := w.recv.count(t, never); n != 1 {
		t.Fatalf("the retried call arrived %d times", n)
	}
}

// The gateway is killed with SIGKILL right after it answered an approved
// call, with the call's outcome queued for the next group commit and not
// yet durable (a flush delay of an hour holds it there: the window a
// crash can hit). After a restart the call reads STATUS_UNKNOWN (never
// RETRY_SAFE, never unknown to the journal), its key still names it (a
// retry is refused, not sent again), and the receiver saw it once.
func TestReleaseGatewayKilledBeforeTheOutcomeIsDurable(t *testing.T) {
	t.Setenv("YETT_GW_RESULT_DELAY", "1h")
	w := newWorld(t, worldOpts{})
	w.stop()
	w.vault.Close()
	g1 := startGatewayProc(t, w, "")
	a := startAgent(t, w.runDir)
	a.connect()
	answered := tag("answered")
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(answered))
	g1.approve()
	mustContain(t, wait(), `"status":200`)
	g1.kill()

	afterRestart(t, w, a, w.req(answered))
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-" + answered}), "STATUS_UNKNOWN inspect_activity_journal")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(answered)), "STATUS_UNKNOWN")
	w.settleAbsent("nothing")
	if n := w.recv.count(t, answered); n != 1 {
		t.Fatalf("the answered call arrived %d times", n)
	}
}

// 9, with the gateway in a process of its own: it stops and starts again
// while an approved agent lives; the agent's next call is answered
// REAUTH_REQUIRED gateway_restarted and the card says "gateway restarted".
func TestReleaseGatewayRestartedOutOfProcess(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.stop()
	w.vault.Close()
	g1 := startGatewayProc(t, w, "")
	a := startAgent(t, w.runDir)
	a.connect()
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(tag("before")))
	g1.approve()
	mustContain(t, wait(), `"status":200`)
	g1.stdin.Close() // orderly stop
	g1.cmd.Wait()

	after := tag("after")
	afterRestart(t, w, a, w.req(after))
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(after)), `"status":200`)
	if n := w.recv.count(t, after); n != 1 {
		t.Fatalf("%d arrivals", n)
	}
}

// afterRestart starts the gateway again, reconnects agent a (a new
// connection of the same run), checks that its call of req is refused with
// REAUTH_REQUIRED gateway_restarted, and approves the "gateway restarted"
// card. It returns the new gateway.
func afterRestart(t *testing.T, w *world, a *agent, req map[string]any) *gatewayProc {
	t.Helper()
	g := startGatewayProc(t, w, "")
	a.do(agentCmd{Op: "close"})
	a.connect()
	mustContain(t, a.call(agentapi.ToolHTTPRequest, req), "REAUTH_REQUIRED gateway_restarted")
	if l := g.approve(); l != `approved "gateway restarted" <nil>` {
		t.Fatalf("card: %s", l)
	}
	return g
}
