//go:build unix

package gateway

// Tests of issue 9's items about the decision pipeline, each through the
// real shim and gateway: an idempotency key names one request (5), checks
// repeated after the wait (8), bounded work per connection (9), one process
// per call (10), oversized frames (11), refused calls audited (12), lock
// cuts requests in flight (13), the tool table racing a lock (14), a
// disconnect is "cancelled" (16).

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// auditEvents decrypts the world's audit log.
func auditEvents(t *testing.T, w *world) []audit.Event {
	t.Helper()
	var out []audit.Event
	for e, err := range audit.ReadEvents(filepath.Join(w.dataDir, AuditDir, audit.LogFile), w.identity) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Event)
	}
	return out
}

// waitAudit waits for an audit event that match accepts.
func waitAudit(t *testing.T, w *world, what string, match func(audit.Event) bool) audit.Event {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		for _, e := range auditEvents(t, w) {
			if match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit event: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// 5. A key reused with another request is refused as such, never answered
// with the earlier call's fate, and the new request is not sent.
func TestIdempotencyKeyNamesOneRequest(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("first")
	other := w.req(tag("other"))
	other["idempotency_key"] = "key-" + "first-reused"
	first := w.req("first-reused")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, first), `"status":200`)
	for name, change := range map[string]func(m map[string]any){
		"url":    func(m map[string]any) { m["url"] = m["url"].(string) + "x" },
		"body":   func(m map[string]any) { m["body"] = map[string]any{"request_id": "changed"} },
		"header": func(m map[string]any) { m["headers"] = map[string]string{"X-Replay-Test-Id": "changed"} },
		"method": func(m map[string]any) { m["method"] = "PUT" },
		"params": func(m map[string]any) { m["params"] = map[string]string{"a": "b"} },
	} {
		t.Run(name, func(t *testing.T) {
			m := w.req("first-reused")
			change(m)
			r := a.call(agentapi.ToolHTTPRequest, m)
			mustContain(t, r, "INVALID_REQUEST idempotency_key_reused")
			if strings.Contains(r.Text, "COMPLETED") || strings.Contains(r.Text, "status=") {
				t.Fatalf("a reused key was answered with a fate: %+v", r)
			}
		})
	}
	// The very same request again is told its fate and not sent again.
	mustContain(t, a.call(agentapi.ToolHTTPRequest, first), "COMPLETED status=200")
	if n := w.recv.count(t, "first-reused"); n != 1 {
		t.Fatalf("%d arrivals", n)
	}
	if n := w.recv.count(t, "changed"); n != 0 {
		t.Fatalf("a request with a reused key was sent %d times", n)
	}
}

// 5. Another run of the same program (every `node` agent is one) cannot read
// a call's fate through yett.status until a person approved it.
func TestStatusOnlyForApprovedRuns(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("first")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req("mine")), `"status":200`)
	b := startAgent(t, w.runDir)
	b.connect()
	r := b.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-mine"})
	mustContain(t, r, "APPROVAL_REQUIRED")
	// Issue 19, item 5: the answer must not read like a status query's
	// advice: sending the call again performs it once approved.
	mustContain(t, r, "is that call, not a query")
	mustContain(t, r, "Yett performs it if no call with this key was sent before")
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("yett.status raised a card: %+v", p)
	}
	for _, leak := range []string{"COMPLETED", "status", "NOT_FOUND", w.recv.addr, "POST"} {
		if strings.Contains(strings.ToLower(r.Text), strings.ToLower(leak)) && leak != "status" {
			t.Fatalf("an unapproved run learned %q: %s", leak, r.Text)
		}
	}
	if strings.Contains(r.Text, "status=") {
		t.Fatalf("an unapproved run learned the outcome: %s", r.Text)
	}
	// A key that does not exist reads the same: existence is not told.
	if r2 := b.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-nothing"}); r2.Text != r.Text {
		t.Fatalf("answers differ for an existing and a missing key:\n%s\n%s", r.Text, r2.Text)
	}
	// Approved, the new run of the same program sees the call.
	wait := b.callAsync(agentapi.ToolHTTPRequest, w.req(tag("b")))
	w.approveNext()
	mustContain(t, wait(), `"status":200`)
	mustContain(t, b.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-mine"}), "COMPLETED status=200")
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-mine"}), "COMPLETED status=200")
}

// 8. The live process is checked again after the per-call card was
// answered: a process that execs another program while the card waits is
// caught before anything is sent, and the person gets the new program's
// card at once. (The exec is the identity change: an executable replaced on
// disk changes nothing the process runs, TestReleaseExecutableReplacedOnDisk.)
func TestIdentityCheckedAfterTheWait(t *testing.T) {
	w := newWorld(t, worldOpts{perCall: true})
	a, send := startExecAgent(t, w)
	args, _ := json.Marshal(w.req(tag("first")))
	send("call " + string(args))
	w.approveNext()
	w.gw.Broker().Answer(w.pending(approval.KindCall).ID, true, "test")
	mustContain(t, agentReply{Text: a.line()}, `\"status\":200`)

	id := tag("waited")
	args, _ = json.Marshal(w.req(id))
	send("send " + string(args))
	sent := a.line()
	card := w.pending(approval.KindCall)
	send("exec")
	if l := a.line(); l != "execd" {
		t.Fatalf("after exec: %q", l)
	}
	w.gw.Broker().Answer(card.ID, true, "test")
	send("await " + strings.TrimPrefix(sent, "sent "))
	mustContain(t, agentReply{Text: a.line()}, "REAUTH_REQUIRED process_changed")
	w.settleAbsent(id)
	if c := w.pending(approval.KindSession); c.Change != approval.ChangeIdentityChanged {
		t.Fatalf("the new program's card: %+v", c)
	}
}

// 8. A per-call card answered after the vault was locked and unlocked is
// refused: the answer was about another vault state.
func TestCallCardRefusedAcrossEpochs(t *testing.T) {
	w := newWorld(t, worldOpts{perCall: true})
	a := startAgent(t, w.runDir)
	a.connect()
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(tag("first")))
	w.approveNext()
	w.gw.Broker().Answer(w.pending(approval.KindCall).ID, true, "test")
	mustContain(t, wait(), `"status":200`)
	id := tag("cycled")
	wait = a.callAsync(agentapi.ToolHTTPRequest, w.req(id))
	card := w.pending(approval.KindCall)
	w.lock()
	w.unlock()
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err == nil {
		t.Fatal("a per-call card of another epoch was approved")
	}
	r := wait()
	if !strings.Contains(r.Text, "WITHDRAWN") && !strings.Contains(r.Text, "REAUTH_REQUIRED") {
		t.Fatalf("reply %+v", r)
	}
	w.settleAbsent(id)
}

// 9. One connection holds a bounded number of unanswered calls: the rest
// are answered BUSY at once, and nothing of them is kept or run later.
func TestBusyBeyondTheBound(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	burst := tag("burst")
	done := make(chan agentReply, 1)
	args, _ := json.Marshal(w.req(burst))
	go func() { done <- a.do(agentCmd{Op: "burst", Tool: agentapi.ToolHTTPRequest, Args: args, N: 40}) }()
	// Deny every session card until the burst is over: a call that arrives
	// after a card was denied raises a new one.
	deadline := time.After(testWait)
	var r agentReply
	for r.Failed == 0 {
		select {
		case r = <-done:
		case <-deadline:
			t.Fatal("the burst did not end")
		case <-time.After(20 * time.Millisecond):
			if len(auditEventsOf(t, w, audit.ReasonBusy)) < 8 {
				continue // not every call has arrived yet
			}
			for _, p := range w.gw.Broker().Pending() {
				w.gw.Broker().Answer(p.ID, false, "test")
			}
		}
	}
	// 32 calls are held at most; the SDK client keeps one of its own open
	// (subscriptions/listen), so 31 or 32 of the burst are admitted.
	if r.Busy < 8 || r.Busy > 9 || r.Failed != 40 {
		t.Fatalf("busy %d, failed %d of 40: %s", r.Busy, r.Failed, r.Text)
	}
	w.settleAbsent(burst)
}

func auditEventsOf(t *testing.T, w *world, reason audit.Reason) []audit.Event {
	var out []audit.Event
	for _, e := range auditEvents(t, w) {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// 10. A client that starts one process per call: each process is asked
// like a first request and its call waits on its card, which says what
// Yett knows of the program's other runs; two processes at the same time
// are not called "restarted".
func TestOneProcessPerCall(t *testing.T) {
	w := newWorld(t, worldOpts{})
	oneCall := func(id string, wantChange approval.Change, wantDetail string) *agent {
		t.Helper()
		p := startAgent(t, w.runDir)
		p.connect()
		wait := p.callAsync(agentapi.ToolHTTPRequest, w.req(id))
		card := w.pending(approval.KindSession)
		if card.Change != wantChange || !strings.Contains(card.ChangeDetail, wantDetail) {
			t.Fatalf("card for %s: %q %q", id, card.Change, card.ChangeDetail)
		}
		if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
			t.Fatal(err)
		}
		mustContain(t, wait(), `"status":200`)
		return p
	}
	p1 := oneCall(tag("one"), approval.ChangeFirst, "")
	p1.kill()
	waitSessions(t, w, 0)
	p2 := oneCall(tag("two"), approval.ChangeAgentRestarted, "ended at")
	// p2 lives on; a third process at the same time is its own first run.
	p3 := oneCall(tag("three"), approval.ChangeAnotherRun, "is live")
	waitSessions(t, w, 2)
	p2.kill()
	p3.kill()
}

// 11. A frame over the size limit is answered with the request's own id,
// so the official SDK's call ends at once instead of at its timeout.
func TestOversizedFrameAnswersTheCall(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("before")
	args, _ := json.Marshal(w.req(tag("big")))
	r := a.do(agentCmd{Op: "callbig", Tool: agentapi.ToolHTTPRequest, Args: args, N: 9 << 20})
	if r.OK || !strings.Contains(r.Err, "size limit") {
		t.Fatalf("oversized call: %+v", r)
	}
	if time.Duration(r.Nanos) > 15*time.Second {
		t.Fatalf("the answer took %v: the SDK waited for its timeout", time.Duration(r.Nanos))
	}
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(tag("after"))), `"status":200`)
}

// 12. A call refused at the vault gate is audited with its method, host and
// idempotency key (never its path or body), and a refused batch is audited.
func TestLockedCallAudited(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	w.lock()
	id := tag("locked")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(id)), "LOCKED")
	e := waitAudit(t, w, "locked denial", func(e audit.Event) bool {
		return e.Type == audit.EventActionDenied && e.Reason == audit.ReasonVaultLocked && e.Action != nil && e.Action.IdempotencyRef == "key-"+id
	})
	if e.Action.Operation != "POST" || e.Action.Target != w.recv.addr || e.Run == nil {
		t.Fatalf("locked denial %+v %+v", e, e.Action)
	}
	raw, _ := json.Marshal(e)
	if strings.Contains(string(raw), "/replay-test/") || strings.Contains(string(raw), `request_id\":`) {
		t.Fatalf("the denial holds the path or body: %s", raw)
	}
	w.unlock()

	s := startRawShim(t, w.runDir)
	s.initialize()
	s.send("[" + callLine(3, w, tag("batch")) + "]")
	s.next()
	waitAudit(t, w, "batch denial", func(e audit.Event) bool {
		return e.Type == audit.EventActionDenied && e.Reason == audit.ReasonFrameRejected && e.Action != nil &&
			e.Action.Channel == "mcp" && e.Action.Operation == "batch"
	})
}

// An approved HTTP call's entries name its path (no query), so the audit
// log answers "for what"; never its body.
func TestCallAuditNamesItsPath(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("before")
	id := tag("path")
	req := w.req(id)
	req["url"] = req["url"].(string) + "?token-like=query-value"
	mustContain(t, a.call(agentapi.ToolHTTPRequest, req), `"status":200`)
	e := waitAudit(t, w, "the call's intent", func(e audit.Event) bool {
		return e.Type == audit.EventActionRequested && e.Action != nil && e.Action.IdempotencyRef == "key-"+id
	})
	if e.Action.Path != "/replay-test/"+id {
		t.Fatalf("the intent names the path %q", e.Action.Path)
	}
	raw, _ := json.Marshal(e)
	if strings.Contains(string(raw), "query-value") || strings.Contains(string(raw), `request_id\":`) {
		t.Fatalf("the intent holds the query or the body: %s", raw)
	}
}

// 13. Lock now cuts requests already in flight: once the lock returned, the
// target receives at most what was already in its own receive buffer (a few
// KiB here), not the rest of the request, and the agent is told the outcome
// is unknown.
func TestLockCutsRequestsInFlight(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("before")
	slow := startSlowTarget(t)
	if _, err := w.vault.Credentials().Add(vault.NewCredential{
		Name: "slow", Secret: vault.NewSecret([]byte(canary)), Injection: vault.Injection{Format: vault.InjectBearer},
		Hosts: []string{slow.addr}, Approval: vault.ApprovalSession,
	}); err != nil {
		t.Fatal(err)
	}
	const body = 4 << 20
	args, _ := json.Marshal(map[string]any{"method": "POST", "url": "http://" + slow.addr + "/slow", "idempotency_key": "key-slow"})
	replies := make(chan agentReply, 1)
	go func() { replies <- a.do(agentCmd{Op: "callbig", Tool: agentapi.ToolHTTPRequest, Args: args, N: body}) }()
	within(t, slow.started, "the request reached the target")
	time.Sleep(100 * time.Millisecond) // the sender is now held back by the target
	w.lock()
	atLock := slow.read.Load()
	r := <-replies
	mustContain(t, r, "STATUS_UNKNOWN")
	within(t, slow.done, "the target's connection ended")
	later := slow.read.Load() - atLock
	if later > 256<<10 || slow.read.Load() >= body {
		t.Fatalf("the target read %d more bytes after the lock (%d of %d in all)", later, slow.read.Load(), body)
	}
	waitAudit(t, w, "cut result", func(e audit.Event) bool {
		return e.Type == audit.EventActionResult && e.Reason == audit.ReasonCutByLock
	})
}

// within waits for ch to close, at most testWait.
func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testWait):
		t.Fatalf("timed out waiting: %s", what)
	}
}

type slowTarget struct {
	addr    string
	started chan struct{}
	done    chan struct{}
	read    atomic.Int64
}

// startSlowTarget accepts one connection on a socket with a small receive
// buffer and reads it 16 KiB every 10 ms until it ends, counting bytes.
func startSlowTarget(t *testing.T) *slowTarget {
	st := &slowTarget{started: make(chan struct{}), done: make(chan struct{})}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10) })
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	st.addr = ln.Addr().String()
	go func() {
		defer close(st.done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 16<<10)
		for {
			n, err := c.Read(buf)
			if st.read.Add(int64(n)); n > 0 && st.read.Load() == int64(n) {
				close(st.started)
			}
			if err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return st
}

// 14. At the moment of locking, a call is answered LOCKED, never "unknown
// tool": many calls race many locks.
func TestLockRaceAnswersLocked(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("before")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			w.vault.Lock("test")
			time.Sleep(2 * time.Millisecond)
			w.vault.Unlock(vault.Passphrase(passphrase))
			time.Sleep(2 * time.Millisecond)
		}
	}()
	for i := 0; i < 200; i++ {
		r := a.call(agentapi.ToolHTTPRequest, w.req(tag("race")))
		if strings.Contains(r.Text+r.Err, "unknown tool") || strings.Contains(r.Err, "-32602") {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	cancel()
	wg.Wait()
}

// 16. A call whose agent went away before it was sent is audited as
// cancelled, not as a journal failure.
func TestDisconnectAuditedAsCancelled(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("before")
	// The agent goes away while its call is being recorded: the journal
	// write sees the call's context cancelled.
	w.gw.hookBeforeIntent = func(ctx context.Context, _ string) {
		a.kill()
		<-ctx.Done()
	}
	a.callAsync(agentapi.ToolHTTPRequest, w.req(tag("gone")))
	waitAudit(t, w, "cancelled denial", func(e audit.Event) bool {
		return e.Type == audit.EventActionDenied && e.Reason == audit.ReasonCancelled
	})
	for _, e := range auditEvents(t, w) {
		if e.Reason == audit.ReasonJournalUnavailable {
			t.Fatalf("a disconnect was audited as %s", e.Reason)
		}
	}
}
