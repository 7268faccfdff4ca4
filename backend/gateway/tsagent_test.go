//go:build unix

package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// tsAgent is a real MCP agent on the official TypeScript SDK
// (build/agents/ts-agent.mjs under node), which starts the real yett mcp.
type tsAgent struct {
	t   *testing.T
	in  *json.Encoder
	mu  sync.Mutex
	n   int
	out map[int]chan tsReply
}

type tsReply struct {
	ID         int             `json:"id"`
	OK         bool            `json:"ok"`
	Err        string          `json:"err"`
	Code       *int            `json:"code"`
	Text       string          `json:"text"`
	IsError    bool            `json:"isError"`
	Structured map[string]any  `json:"structured"`
	Progress   []string        `json:"progress"`
	Tools      json.RawMessage `json:"tools"`
	Changes    int             `json:"changes"`
	PID        int             `json:"pid"`
}

func startTSAgent(t *testing.T, w *world) *tsAgent {
	t.Helper()
	script, err := filepath.Abs("../../build/agents/ts-agent.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the TypeScript SDK is not installed: run build/scripts/deps.sh test (%v)", err)
	}
	cmd := exec.Command("node", script)
	cmd.Env = append(os.Environ(), "YETT_BIN="+yettBin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &prefixWriter{t: t, prefix: "ts-agent: "}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &tsAgent{t: t, in: json.NewEncoder(stdin), out: map[int]chan tsReply{}}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			var r tsReply
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			a.mu.Lock()
			ch := a.out[r.ID]
			delete(a.out, r.ID)
			a.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if strings.Contains(stderr.String(), canary) {
			t.Error("canary in the TypeScript agent's or the shim's stderr")
		}
	})
	if r := a.do(map[string]any{"op": "connect", "env": map[string]string{"YETT_RUNTIME_DIR": w.runDir}}); !r.OK {
		t.Fatalf("connect: %s", r.Err)
	}
	return a
}

// send sends a command and returns the wait for its reply.
func (a *tsAgent) send(c map[string]any) func() tsReply {
	a.mu.Lock()
	a.n++
	id := a.n
	ch := make(chan tsReply, 1)
	a.out[id] = ch
	a.mu.Unlock()
	c["id"] = id
	if err := a.in.Encode(c); err != nil {
		a.t.Fatal(err)
	}
	return func() tsReply {
		a.t.Helper()
		select {
		case r := <-ch:
			return r
		case <-time.After(testWait):
			a.t.Fatalf("ts-agent: no reply to %v", c)
			return tsReply{}
		}
	}
}

func (a *tsAgent) do(c map[string]any) tsReply { return a.send(c)() }

// pendingCall waits for the one pending per-call card.
func (w *world) pendingCall(t *testing.T, stopped bool) approval.Request {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for time.Now().Before(deadline) {
		var calls []approval.Request
		for _, r := range w.gw.Broker().Pending() {
			if r.Kind == approval.KindCall {
				calls = append(calls, r)
			}
		}
		if len(calls) > 1 {
			t.Fatalf("%d per-call cards for one call: %+v", len(calls), calls)
		}
		if len(calls) == 1 && calls[0].AgentStoppedWaiting == stopped {
			return calls[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no per-call card (the agent stopped waiting: %v)", stopped)
	return approval.Request{}
}

// The official TypeScript SDK, through the real yett mcp: it reads the
// tools' annotations and validates every result against its tool's output
// schema; while a card waits it hears progress; a call it abandons at its
// own deadline does not strand the person, because the retry with the same
// idempotency key joins the card still pending, or takes the answer given
// meanwhile; a call without a key that it abandons withdraws its card.
func TestTypeScriptSDKAgent(t *testing.T) {
	w := newWorld(t, worldOpts{perCall: true, progressEvery: 100 * time.Millisecond})
	a := startTSAgent(t, w)

	var tools []struct {
		Name        string          `json:"name"`
		Annotations map[string]any  `json:"annotations"`
		Output      json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(a.do(map[string]any{"op": "list"}).Tools, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if len(tool.Output) == 0 || tool.Annotations == nil {
			t.Fatalf("%s: no output schema or annotations", tool.Name)
		}
		if read := tool.Annotations["readOnlyHint"] == true; read != (tool.Name == agentapi.ToolStatus || tool.Name == agentapi.ToolHTTPGet) {
			t.Errorf("%s: readOnlyHint %v", tool.Name, tool.Annotations["readOnlyHint"])
		}
	}

	// 1. Progress while the session card and then the per-call card wait.
	wait := a.send(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": w.req("ts-1"), "progress": true})
	session := w.pending(approval.KindSession)
	time.Sleep(350 * time.Millisecond)
	if err := w.gw.Broker().Answer(session.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	card := w.pendingCall(t, false)
	time.Sleep(350 * time.Millisecond)
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	r := wait()
	if !r.OK || r.IsError || r.Structured["outcome"] != "COMPLETED" || r.Structured["status"] != float64(200) {
		t.Fatalf("the approved call: %+v", r)
	}
	joined := strings.Join(r.Progress, "\n")
	if !strings.Contains(joined, "waiting for approval in Yett: new agent, ") || !strings.Contains(joined, "waiting for approval in Yett: this call, ") ||
		!strings.Contains(joined, " s left") {
		t.Fatalf("progress heard while the cards waited: %q", r.Progress)
	}

	// 2. The client gives up at its own deadline (the SDK sends
	// notifications/cancelled): the keyed call's card stays, says so, and the
	// retry of the same call joins it instead of raising a second.
	r = a.do(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": w.req("ts-2"), "timeoutMs": 700})
	if r.OK || r.Code == nil || *r.Code != -32001 {
		t.Fatalf("the SDK did not time the call out: %+v", r)
	}
	first := w.pendingCall(t, true)
	retry := a.send(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": w.req("ts-2")})
	if again := w.pendingCall(t, false); again.ID != first.ID {
		t.Fatalf("the retry raised card %s beside %s", again.ID, first.ID)
	}
	if err := w.gw.Broker().Answer(first.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	if r := retry(); !r.OK || r.Structured["outcome"] != "COMPLETED" {
		t.Fatalf("the retry that joined the card: %+v", r)
	}
	if n := w.recv.count(t, "ts-2"); n != 1 {
		t.Fatalf("the joined call reached the server %d times", n)
	}

	// 3. Answered while nobody waited: the retry takes the answer at once,
	// once; the next call asks again.
	if r := a.do(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": w.req("ts-3"), "timeoutMs": 700}); r.OK {
		t.Fatalf("the SDK did not time the call out: %+v", r)
	}
	if err := w.gw.Broker().Answer(w.pendingCall(t, true).ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	if r := a.do(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": w.req("ts-3")}); !r.OK || r.Structured["outcome"] != "COMPLETED" {
		t.Fatalf("the retry of a call approved meanwhile: %+v", r)
	}
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("the retry raised a card: %+v", p)
	}
	// Another call under that key is another request: it does not take
	// the earlier answer (it gets a card of its own) and, approved, is
	// refused as a reused key, never sent.
	other := w.req("ts-4")
	other["idempotency_key"] = "key-ts-3"
	wait = a.send(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": other})
	if err := w.gw.Broker().Answer(w.pendingCall(t, false).ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	if r := wait(); r.Structured["detail"] != agentapi.DetailKeyReused || w.recv.count(t, "ts-4") != 0 {
		t.Fatalf("another request under a used key: %+v", r)
	}

	// 4. Without a key nothing could join the card: the client giving up
	// withdraws it, and the audit log says the call was cancelled.
	nokey := w.req("ts-5")
	delete(nokey, "idempotency_key")
	if r := a.do(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": nokey, "timeoutMs": 700}); r.OK {
		t.Fatalf("the SDK did not time the call out: %+v", r)
	}
	waitAudit(t, w, "the refusal of a cancelled call", func(e audit.Event) bool {
		return e.Type == audit.EventActionDenied && e.Reason == audit.ReasonCancelled
	})
	deadline := time.Now().Add(testWait)
	for len(w.gw.Broker().Pending()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the card of an abandoned call without a key stayed: %+v", w.gw.Broker().Pending())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := w.recv.count(t, "ts-5"); n != 0 {
		t.Fatal("an abandoned call was sent")
	}

	// 5. A time-boxed grant: given on a per-call card, used by the next
	// call like it (no card), cut by a lock.
	wait = a.send(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": w.req("ts-6")})
	card = w.pendingCall(t, false)
	if card.GrantWords == "" {
		t.Fatalf("the per-call card offers no grant: %+v", card)
	}
	if err := w.gw.Broker().AnswerGrant(card.ID, approval.Via{Surface: approval.SurfaceApp}); err != nil {
		t.Fatal(err)
	}
	if r := wait(); r.Structured["outcome"] != "COMPLETED" {
		t.Fatalf("the granted card's call: %+v", r)
	}
	if r := a.do(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": w.req("ts-7")}); r.Structured["outcome"] != "COMPLETED" ||
		len(w.gw.Broker().Pending()) != 0 {
		t.Fatalf("the call under the grant: %+v (pending %+v)", r, w.gw.Broker().Pending())
	}
	w.lock()
	if len(w.gw.Broker().Grants()) != 0 {
		t.Fatal("the grant outlived the lock")
	}
	fmt.Fprintln(os.Stderr) // keep the SDK's output apart from the test's
}

// TestTypeScriptSDKReadsPassWritesAsk: through the official TypeScript SDK
// and the real yett mcp, with a credential whose approval is "writes": a
// GET goes on the session, a POST waits on its own card (the client hears
// progress meanwhile) and goes once approved.
func TestTypeScriptSDKReadsPassWritesAsk(t *testing.T) {
	w := newWorld(t, worldOpts{approval: vault.ApprovalWrites, progressEvery: 100 * time.Millisecond})
	a := startTSAgent(t, w)
	get := map[string]any{"method": "GET", "url": "http://" + w.recv.addr + "/replay-test/ts-read-1", "idempotency_key": "key-ts-read-1"}
	wait := a.send(map[string]any{"op": "call", "tool": agentapi.ToolHTTPGet, "args": get})
	w.approveNext()
	if r := wait(); r.Structured["outcome"] != "COMPLETED" || len(w.gw.Broker().Pending()) != 0 {
		t.Fatalf("the read: %+v", r)
	}
	wait = a.send(map[string]any{"op": "call", "tool": agentapi.ToolHTTPRequest, "args": w.req("ts-write-1"), "progress": true})
	card := w.pendingCall(t, false)
	if card.Method != "POST" {
		t.Fatalf("card %+v", card)
	}
	time.Sleep(250 * time.Millisecond)
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	r := wait()
	if r.Structured["outcome"] != "COMPLETED" || !strings.Contains(strings.Join(r.Progress, "\n"), "waiting for approval in Yett: this call") {
		t.Fatalf("the write: %+v", r)
	}
	if w.recv.count(t, "ts-read-1") != 1 || w.recv.count(t, "ts-write-1") != 1 {
		t.Fatal("the read and the write did not arrive once each")
	}
	fmt.Fprintln(os.Stderr)
}
