//go:build unix

package gateway

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// A credential marked per-call asks for every call, after the session, and
// the session never stands in for it.
func TestPerCallApprovalIsSeparate(t *testing.T) {
	w := newWorld(t, worldOpts{perCall: true})
	a := startAgent(t, w.runDir)
	a.connect()
	one, two := tag("percall-1"), tag("percall-2")
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(one))
	w.approveNext()
	card := w.pending(approval.KindCall)
	if card.Method != "POST" || !strings.HasSuffix(card.Target, "/replay-test/"+one) || card.Credential != "receiver" {
		t.Fatalf("call card %+v", card)
	}
	w.gw.Broker().Answer(card.ID, true, "test")
	mustContain(t, wait(), `"status":200`)

	wait = a.callAsync(agentapi.ToolHTTPRequest, w.req(two))
	card = w.pending(approval.KindCall)
	if len(w.gw.Broker().Sessions()) != 1 {
		t.Fatal("session lost")
	}
	w.gw.Broker().Answer(card.ID, false, "test")
	mustContain(t, wait(), "DENIED")
	if w.recv.count(t, one) != 1 || w.recv.count(t, two) != 0 {
		t.Fatal("wrong arrival counts")
	}
}

// Reads pass, writes ask: with a credential whose approval is "writes",
// GET and HEAD (through http.get and http.request) go on the run's session
// approval alone, and every other method gets a card of its own, which the
// session never replaces: approved, the write goes; denied, it does not.
func TestReadsPassWritesAsk(t *testing.T) {
	w := newWorld(t, worldOpts{approval: vault.ApprovalWrites})
	a := startAgent(t, w.runDir)
	a.connect()
	read := func(tool, method, id string) map[string]any {
		return map[string]any{"method": method, "url": "http://" + w.recv.addr + "/replay-test/" + id, "idempotency_key": "key-" + id}
	}
	first := tag("reads-first")
	wait := a.callAsync(agentapi.ToolHTTPGet, read(agentapi.ToolHTTPGet, "GET", first))
	w.approveNext()
	mustContain(t, wait(), `"status":200`)
	reads := []string{first}
	for _, r := range []struct{ tool, method string }{{agentapi.ToolHTTPGet, "HEAD"}, {agentapi.ToolHTTPRequest, "GET"}, {agentapi.ToolHTTPRequest, "HEAD"}} {
		id := tag("reads")
		reads = append(reads, id)
		mustContain(t, a.call(r.tool, read(r.tool, r.method, id)), `"status":200`)
		if p := w.gw.Broker().Pending(); len(p) != 0 {
			t.Fatalf("a %s through %s raised a card: %+v", r.method, r.tool, p)
		}
	}
	for _, id := range reads {
		if w.recv.count(t, id) != 1 {
			t.Fatalf("read %s arrived %d times", id, w.recv.count(t, id))
		}
	}
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		yes, no := tag("write-yes"), tag("write-no")
		for _, id := range []string{yes, no} {
			req := w.req(id)
			req["method"] = method
			if method == "DELETE" {
				delete(req, "body")
			}
			wait := a.callAsync(agentapi.ToolHTTPRequest, req)
			card := w.pending(approval.KindCall)
			if card.Method != method || !strings.HasSuffix(card.Target, "/replay-test/"+id) || card.Credential != "receiver" {
				t.Fatalf("call card %+v", card)
			}
			w.gw.Broker().Answer(card.ID, id == yes, "test")
			if id == yes {
				mustContain(t, wait(), `"status":200`)
			} else {
				mustContain(t, wait(), "DENIED")
			}
		}
		if w.recv.count(t, yes) != 1 || w.recv.count(t, no) != 0 {
			t.Fatalf("%s: approved arrived %d times, denied %d", method, w.recv.count(t, yes), w.recv.count(t, no))
		}
	}
	if len(w.gw.Broker().Sessions()) != 1 {
		t.Fatal("the session did not hold across the writes' cards")
	}
}

// An audit log that cannot write denies the call before anything leaves,
// with a clear answer, and the journal proves nothing left.
func TestAuditFailureDeniesCall(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("ok")
	w.audit.Close() // every later Append fails
	id := tag("noaudit")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(id)), "AUDIT_UNAVAILABLE")
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-" + id}), "RETRY_SAFE previous_action_not_started")
	w.settleAbsent(id)
}

// A revoked session ends at once; the next call waits on a new card that
// says so.
func TestRevokeEndsSession(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("ok")
	ss := w.gw.Broker().Sessions()
	if len(ss) != 1 {
		t.Fatalf("%d sessions", len(ss))
	}
	if err := w.gw.Broker().Revoke(ss[0].ID); err != nil {
		t.Fatal(err)
	}
	id := tag("after-revoke")
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(id))
	card := w.pending(approval.KindSession)
	if card.Change != approval.ChangeRevoked {
		t.Fatalf("card says %q", card.Change)
	}
	w.gw.Broker().Answer(card.ID, false, "test")
	mustContain(t, wait(), "DENIED")
	w.settleAbsent(id)
}

// Locking the vault while a call waits on its card withdraws the card and
// denies the call; the unlock brings neither back.
func TestLockWhileCardPending(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	id := tag("waiting")
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(id))
	w.pending(approval.KindSession)
	w.lock()
	mustContain(t, wait(), "WITHDRAWN")
	if len(w.gw.Broker().Pending()) != 0 {
		t.Fatal("card survived the lock")
	}
	w.unlock()
	w.settleAbsent(id)
	if len(w.gw.Broker().Pending()) != 0 {
		t.Fatal("card came back after unlock")
	}
}

// The audit log holds the authority changes with concrete facts and no
// secret: gateway_started (with the previous boot after a restart),
// session_approved with the run binding, the action, session_ended with
// its reason.
func TestAuditTrail(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	pid := a.do(agentCmd{Op: "pid"}).PID
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(tag("audited")))
	w.approveNext()
	mustContain(t, wait(), `"status":200`)
	a.kill()
	waitSessions(t, w, 0)
	firstBoot := w.gw.BootID()
	w.stop()
	w.start()
	w.stop()

	var types []audit.EventType
	var approved, ended *audit.Event
	var starts []audit.Event
	for e, err := range audit.ReadEvents(filepath.Join(w.dataDir, AuditDir, audit.LogFile), w.identity) {
		if err != nil {
			t.Fatal(err)
		}
		ev := e.Event
		types = append(types, ev.Type)
		switch ev.Type {
		case audit.EventSessionApproved:
			approved = &ev
		case audit.EventSessionEnded:
			if ended == nil {
				ended = &ev
			}
		case audit.EventGatewayStarted:
			starts = append(starts, ev)
		}
	}
	if approved == nil || approved.Run == nil || approved.Run.PID != pid || approved.Run.LaunchNonce == "" || approved.BootID != firstBoot {
		t.Fatalf("session_approved %+v", approved)
	}
	if ended == nil || ended.Reason != audit.ReasonProcessExited {
		t.Fatalf("session_ended %+v", ended)
	}
	if len(starts) != 2 || starts[1].PreviousBootID != firstBoot {
		t.Fatalf("gateway_started %+v", starts)
	}
	// The call's own entries, in order: its intent (durable before a byte
	// left), then its result.
	want := []audit.EventType{audit.EventActionRequested, audit.EventActionResult}
	var got []audit.EventType
	for _, typ := range types {
		if typ == audit.EventActionRequested || typ == audit.EventActionDispatched || typ == audit.EventActionResult {
			got = append(got, typ)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("action entries %v, want %v (all: %v)", got, want, types)
	}
}

// The socket is 0600 in a 0700 directory, and one gateway runs per
// runtime directory.
func TestSocketPrivateAndSingle(t *testing.T) {
	w := newWorld(t, worldOpts{})
	st, err := os.Stat(w.gw.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || st.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket mode %v", st.Mode())
	}
	dst, _ := os.Stat(w.runDir)
	if dst.Mode().Perm() != 0o700 {
		t.Fatalf("runtime dir mode %v", dst.Mode())
	}
	_, err = New(Config{Vault: w.vault, DataDir: w.dataDir, RuntimeDir: w.runDir, Audit: w.audit})
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second gateway: %v", err)
	}
}

// A peer running as another user is refused before a byte is read: the
// directory and socket are opened up on purpose so the kernel lets the
// connection through, and the gateway still says nothing to it.
func TestForeignUserRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root to run a process as another user (CI runs as root)")
	}
	w := newWorld(t, worldOpts{})
	os.Chmod(filepath.Dir(w.runDir), 0o755)
	os.Chmod(w.runDir, 0o755)
	os.Chmod(w.gw.SocketPath(), 0o666)
	dir, err := os.MkdirTemp("", "ygw-nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "yett")
	b, _ := os.ReadFile(yettBin)
	os.WriteFile(bin, b, 0o755)
	cmd := exec.Command(bin, "mcp")
	cmd.Env = []string{"YETT_RUNTIME_DIR=" + w.runDir, "HOME=/"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}` + "\n")
	var out strings.Builder
	cmd.Stdout = &out
	done := make(chan error, 1)
	cmd.Start()
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(testWait):
		cmd.Process.Kill()
		t.Fatal("shim of another user was kept waiting")
	}
	if out.Len() != 0 {
		t.Fatalf("gateway answered another user: %q", out.String())
	}
	// The shim may end (its stdin is at EOF) before the gateway has
	// identified the peer and logged the refusal: wait for the line.
	var logs string
	for deadline := time.Now().Add(testWait); ; time.Sleep(20 * time.Millisecond) {
		w.logMu.Lock()
		logs = w.logs.String()
		w.logMu.Unlock()
		if strings.Contains(logs, "foreign_user") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no refusal logged: %s", logs)
		}
	}
}

// Only the genuine `yett mcp` may connect: a program that dials the socket
// itself (which would make its parent the origin shown on the card) is
// refused without an answer.
func TestNonShimPeerRefused(t *testing.T) {
	w := newWorld(t, worldOpts{})
	c, err := net.Dial("unix", w.gw.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}` + "\n"))
	c.SetReadDeadline(time.Now().Add(testWait))
	b, err := io.ReadAll(c)
	if len(b) != 0 || (err != nil && !errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("a direct dialer got %q, %v", b, err)
	}
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatal("card for a refused peer")
	}
}

// copyAgent writes a copy of this test binary, plus extra bytes (a
// different SHA-256, still a valid executable), into a fresh directory.
func copyAgent(t *testing.T, name string, extra []byte) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ygw-agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	if err := os.WriteFile(bin, append(self, extra...), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// The executable of an approved agent is replaced on disk by another
// version (an upgrade), then given a hard link and a new mode (what package
// managers and backup tools do): the process still runs the image Yett
// inspected, so its run and session go on (issue 19, item 2: before, the
// next call and every call after it answered REAUTH_REQUIRED process_changed
// with no card, and a reconnect never got one either). A process started
// from the new file is another program: it gets its own card.
func TestReleaseExecutableReplacedOnDisk(t *testing.T) {
	w := newWorld(t, worldOpts{})
	bin := copyAgent(t, "agent", nil)
	a := startAgentAt(t, w.runDir, bin)
	a.connect()
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(tag("before")))
	w.approveNext()
	mustContain(t, wait(), `"status":200`)

	newer := copyAgent(t, "agent-new", []byte{0})
	if err := os.Rename(newer, bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(bin, bin+".backup"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(tag("after"))), `"status":200`)
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("a card for a process that did not change: %+v", p)
	}
	waitSessions(t, w, 1)

	b := startAgentAt(t, w.runDir, bin)
	bPID := b.do(agentCmd{Op: "pid"}).PID
	b.connect()
	wait = b.callAsync(agentapi.ToolHTTPRequest, w.req(tag("new-version")))
	card := w.pending(approval.KindSession)
	if card.Who.PID != bPID || card.Who.ExeSHA256 == w.gw.Broker().Sessions()[0].Who.ExeSHA256 {
		t.Fatalf("the new version's card: %+v", card.Who)
	}
	w.gw.Broker().Answer(card.ID, false, "test")
	mustContain(t, wait(), "DENIED")
}

// The approved agent process execs another program (same pid, same start
// time, other executable): when it connects again the call is answered
// REAUTH_REQUIRED process_changed and the card says "identity changed".
func TestReleaseIdentityChangedByExec(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgentAt(t, w.runDir, copyAgent(t, "agent", nil))
	pid := a.do(agentCmd{Op: "pid"}).PID
	a.connect()
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(tag("before")))
	w.approveNext()
	mustContain(t, wait(), `"status":200`)

	other := copyAgent(t, "other-agent", []byte{0})
	if err := a.in.Encode(agentCmd{Op: "exec", Tool: other}); err != nil {
		t.Fatal(err)
	}
	// Write nothing more until the exec happened: the old image would
	// swallow it into its read buffer.
	deadline := time.Now().Add(testWait)
	for {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == other {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not exec")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := a.do(agentCmd{Op: "pid"}).PID; got != pid {
		t.Fatalf("pid %d after exec, want %d", got, pid)
	}
	waitSessions(t, w, 0)
	a.connect()
	id := tag("after")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(id)), "REAUTH_REQUIRED process_changed")
	card := w.pending(approval.KindSession)
	if card.Change != approval.ChangeIdentityChanged || card.Who.PID != pid {
		t.Fatalf("card %+v", card)
	}
	w.settleAbsent(id)
}

// A time-boxed grant through the real shim: "Approve calls like this for
// 10 minutes" on a per-call card lets the same run's next write under the
// same path prefix go without a card; the audit log holds the grant
// (grant_given, with the answer's via), each call it let through (its
// intent's via names the grant) and its end when the vault locks.
func TestGrantThroughTheGateway(t *testing.T) {
	w := newWorld(t, worldOpts{perCall: true})
	a := startAgent(t, w.runDir)
	a.connect()
	one, two, three := tag("grant-1"), tag("grant-2"), tag("grant-3")
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(one))
	w.approveNext()
	card := w.pending(approval.KindCall)
	if !strings.HasPrefix(card.GrantWords, "POST requests to "+w.recv.addr+"/replay-test/") {
		t.Fatalf("the card offers %q", card.GrantWords)
	}
	if err := w.gw.Broker().AnswerGrant(card.ID, approval.Via{Surface: approval.SurfaceApp}); err != nil {
		t.Fatal(err)
	}
	mustContain(t, wait(), `"status":200`)
	for _, id := range []string{two, three} {
		mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req(id)), `"status":200`)
		if p := w.gw.Broker().Pending(); len(p) != 0 {
			t.Fatalf("a call under the grant raised a card: %+v", p)
		}
	}
	for _, id := range []string{one, two, three} {
		if w.recv.count(t, id) != 1 {
			t.Fatalf("%s arrived %d times", id, w.recv.count(t, id))
		}
	}
	gs := w.gw.Broker().Grants()
	if len(gs) != 1 || gs[0].Uses != 2 {
		t.Fatalf("grants %+v", gs)
	}
	w.lock()
	if len(w.gw.Broker().Grants()) != 0 {
		t.Fatal("the grant outlived the lock")
	}
	ended := waitAudit(t, w, "grant_ended", func(e audit.Event) bool { return e.Type == audit.EventGrantEnded })
	if ended.Grant == nil || ended.Grant.ID != gs[0].ID || ended.Grant.Uses != 2 || ended.Reason != audit.ReasonVaultStateChanged {
		t.Fatalf("grant_ended %+v %+v", ended, ended.Grant)
	}
	var given *audit.Event
	var viaGrant int
	for _, e := range auditEvents(t, w) {
		switch {
		case e.Type == audit.EventGrantGiven:
			given = &e
		case e.Type == audit.EventActionRequested && e.Via != nil && e.Via.Surface == approval.SurfaceGrant:
			if !strings.Contains(e.Via.Detail, gs[0].ID) {
				t.Fatalf("a call's via does not name the grant: %+v", e.Via)
			}
			viaGrant++
		}
	}
	if given == nil || given.Grant.ID != gs[0].ID || given.Grant.Method != "POST" || given.Via == nil || given.Via.Surface != approval.SurfaceApp ||
		given.SessionID != gs[0].SessionID || viaGrant != 2 {
		t.Fatalf("grant_given %+v; %d calls name the grant", given, viaGrant)
	}
	w.checkNoLeak()
}
